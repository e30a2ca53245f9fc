import PostgresNIO

extension PostgresRowSequence {
    /// Reads every row and drops them, so the statement is finished before the next one.
    package func drain() async throws {
        for try await _ in self {}
    }
}
