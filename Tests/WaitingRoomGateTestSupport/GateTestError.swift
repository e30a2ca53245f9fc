/// A gate test's own failure (a server that did not start, an emulator that minted nothing).
public struct GateTestError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
