/// Which part of a crowd one `waitingroom load` process runs (`--shard I/N`, or a Kubernetes
/// Indexed Job's `JOB_COMPLETION_INDEX` with `--shards N`): shard I of N runs the users whose
/// global number i (0-based, of the whole crowd) has i % N == I.
///
/// I is 0-based, as `JOB_COMPLETION_INDEX` is: shards 0/4, 1/4, 2/4 and 3/4 make a crowd of
/// four. Dealing users round-robin keeps the crowd's shape in every shard: each shard takes
/// its users' arrival offsets from the whole crowd's schedule, computed with the same seed
/// (``part(of:)``), so the shards' arrivals interleave back into the schedule one process
/// would follow; and user ids are built from the global number (``userID(_:prefix:)``), so
/// they never collide across shards and match one process's ids.
package struct LoadShard: Equatable, Sendable, CustomStringConvertible {
    /// This shard's number, 0 ..< ``count``.
    package let index: Int
    /// How many shards the crowd is split into, 1 … ``maximumCount``.
    package let count: Int

    /// The most shards a crowd is split into.
    package static let maximumCount = 10_000
    /// The whole crowd in one process: shard 0/1.
    package static let whole = LoadShard(checkedIndex: 0, count: 1)

    /// Shard `index` of `count`, or nil unless 0 ≤ index < count and 1 ≤ count ≤ ``maximumCount``.
    package init?(index: Int, count: Int) {
        guard (1...Self.maximumCount).contains(count), (0..<count).contains(index) else { return nil }
        self.init(checkedIndex: index, count: count)
    }

    /// A shard whose numbers are already checked.
    private init(checkedIndex index: Int, count: Int) {
        self.index = index
        self.count = count
    }

    /// The shard `I/N` spells (decimal digits only, I 0-based: `0/4` … `3/4`), or nil.
    package init?(spelling: String) {
        let parts = spelling.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Self.decimal(parts[0]), let count = Self.decimal(parts[1]) else { return nil }
        self.init(index: index, count: count)
    }

    /// The spelling ``init(spelling:)`` reads: `2/4`.
    package var description: String { "\(index)/\(count)" }

    /// The shard a Kubernetes Indexed Job's pod runs, for when `--shard` is absent: its
    /// `JOB_COMPLETION_INDEX` (0-based) as I and `--shards` (`shards`) as N. Nil (the whole
    /// crowd) when neither is there; an error when only one is, or either is out of range.
    package static func fromEnvironment(_ env: [String: String], shards: Int?) -> Result<LoadShard?, LoadShardError> {
        let found = env[LoadShardError.indexVariable]
        guard let shards else { return found.map { .failure(.indexWithoutShards(index: $0)) } ?? .success(nil) }
        guard (1...maximumCount).contains(shards) else { return .failure(.shardsOutOfRange(shards)) }
        guard let found else { return .failure(.noIndex(shards: shards)) }
        guard let index = decimal(Substring(found)) else { return .failure(.badIndex(found)) }
        guard index < shards else { return .failure(.indexOutOfRange(index: index, shards: shards)) }
        return .success(LoadShard(checkedIndex: index, count: shards))
    }

    /// The shard a `load` process runs from its options and environment: `--shard` (`spelling`)
    /// when given (and then `--shards`, if given too, must agree with its N), else
    /// ``fromEnvironment(_:shards:)``; nil for the whole crowd.
    package static func resolve(spelling: String?, shards: Int?, environment: [String: String]) -> Result<LoadShard?, LoadShardError> {
        guard let spelling else { return fromEnvironment(environment, shards: shards) }
        guard let shard = LoadShard(spelling: spelling) else { return .failure(.badSpelling(spelling)) }
        if let shards, shards != shard.count { return .failure(.shardsDisagree(shard: shard, shards: shards)) }
        return .success(shard)
    }

    /// The global numbers (0-based) of the users this shard runs out of a crowd of `total`:
    /// index, index + count, index + 2 × count, … (none when the shard's index is past the crowd).
    package func users(of total: Int) -> [Int] {
        index < total ? Array(stride(from: index, to: total, by: count)) : []
    }

    /// This shard's elements of a per-user array of the whole crowd (the arrival schedule of
    /// ``LoadArrivals/offsets(count:seed:)``): `perUser[i]` for each of ``users(of:)``.
    package func part<Element>(of perUser: [Element]) -> [Element] {
        users(of: perUser.count).map { perUser[$0] }
    }

    /// The id of global user `global` (0-based): `prefix-(global + 1)`, as one process running
    /// the whole crowd names it, so ids are unique across shards.
    package func userID(_ global: Int, prefix: String) -> String { "\(prefix)-\(global + 1)" }

    /// `text` as a whole number of decimal digits only (no sign, no spaces), or nil.
    static func decimal(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.count <= 9, text.allSatisfy({ ("0"..."9").contains($0) }) else { return nil }
        return Int(text)
    }
}
