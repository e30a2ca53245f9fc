/// Why `waitingroom load` could not tell which shard it runs (``LoadShard``).
package enum LoadShardError: Error, Equatable, Sendable, CustomStringConvertible {
    /// `--shard` is not `I/N` with 0 ≤ I < N ≤ 10,000.
    case badSpelling(String)
    /// `--shard I/N` and `--shards M` with M ≠ N.
    case shardsDisagree(shard: LoadShard, shards: Int)
    /// `--shards` is not 1 … 10,000.
    case shardsOutOfRange(Int)
    /// `--shards N` without `--shard` and without `JOB_COMPLETION_INDEX`.
    case noIndex(shards: Int)
    /// `JOB_COMPLETION_INDEX` set (a pod of an Indexed Job) without `--shards`: every pod
    /// would run the whole crowd.
    case indexWithoutShards(index: String)
    /// `JOB_COMPLETION_INDEX` is not a whole number.
    case badIndex(String)
    /// `JOB_COMPLETION_INDEX` is not below `--shards`.
    case indexOutOfRange(index: Int, shards: Int)

    /// The variable a Kubernetes Indexed Job sets to each pod's 0-based index.
    package static let indexVariable = "JOB_COMPLETION_INDEX"

    /// One line saying what is wrong and what to give instead.
    package var description: String {
        let variable = Self.indexVariable
        let most = LoadShard.maximumCount
        return switch self {
        case .badSpelling(let text): "--shard \(text): expected I/N, shard I (from 0) of N, with 0 ≤ I < N ≤ \(most), as in 0/4"
        case .shardsDisagree(let shard, let shards): "--shard \(shard) splits the crowd in \(shard.count), but --shards says \(shards)"
        case .shardsOutOfRange(let shards): "--shards \(shards): expected 1 to \(most) shards"
        case .noIndex(let shards):
            "--shards \(shards) needs \(variable) (set by a Kubernetes Indexed Job) or --shard I/\(shards) to say which shard this is"
        case .indexWithoutShards(let index):
            "\(variable) is \(index) (a pod of an Indexed Job), but --shards is missing: give --shards N, the Job's completions, "
                + "or every pod runs the whole crowd"
        case .badIndex(let text): "\(variable) is \"\(text)\", not a shard number (0, 1, 2, …)"
        case .indexOutOfRange(let index, let shards): "\(variable) is \(index), but --shards \(shards) numbers shards 0 to \(shards - 1)"
        }
    }
}
