import Testing
import WaitingRoomLoad

/// Issue 52 §1: which part of a crowd a `load` process runs (`--shard I/N`, or an Indexed Job's
/// `JOB_COMPLETION_INDEX` with `--shards N`): every user in exactly one shard, arrivals that
/// keep the crowd's shape, ids that never collide.
@Suite("load shard")
struct LoadShardTests {
    /// Every shard of `n`.
    static func shards(_ n: Int) -> [LoadShard] { (0..<n).compactMap { LoadShard(index: $0, count: n) } }

    @Test(arguments: [1, 2, 3, 4, 7, 10, 64, 10_000])
    func shardsSplitTheCrowdWithNoUserTwiceAndNoneLeftOut(n: Int) {
        #expect(Self.shards(n).count == n)
        for total in [0, 1, 3, 8, 100, 8_000] {
            let all = Self.shards(n).map { $0.users(of: total) }
            #expect(all.flatMap { $0 }.sorted() == Array(0..<total), "\(total) users in \(n) shards")
            #expect(all.allSatisfy { $0.count == total / n || $0.count == total / n + 1 }, "balanced within one user")
            for (index, users) in all.enumerated() { #expect(users.allSatisfy { $0 % n == index }) }
        }
    }

    @Test(arguments: [LoadArrivals.burst, .uniform(seconds: 60), .poisson(perSecond: 50)], [1, 4, 7, 2_000])
    func eachShardsArrivalsInterleaveBackIntoTheFullSchedule(arrivals: LoadArrivals, n: Int) {
        let total = 1_000
        let full = arrivals.offsets(count: total, seed: 7)
        var rebuilt = Array(repeating: -1.0, count: total)
        var pooled: [Double] = []
        for shard in Self.shards(n) {
            let part = shard.part(of: full)
            #expect(part == shard.users(of: total).map { full[$0] })
            #expect(part == part.sorted(), "a shard's arrivals keep the schedule's order")
            for (user, offset) in zip(shard.users(of: total), part) { rebuilt[user] = offset }
            pooled += part
        }
        #expect(rebuilt == full)
        #expect(pooled.sorted() == full.sorted())
        // the same seed gives every shard the same schedule to take from
        #expect(arrivals.offsets(count: total, seed: 7) == full)
    }

    @Test(arguments: [1, 3, 4, 9])
    func userIDsAreUniqueAcrossShardsAndMatchOneProcesss(n: Int) {
        let total = 500
        let ids = Self.shards(n).flatMap { shard in shard.users(of: total).map { shard.userID($0, prefix: "load") } }
        #expect(Set(ids).count == total)
        #expect(Set(ids) == Set(LoadShard.whole.users(of: total).map { LoadShard.whole.userID($0, prefix: "load") }))
        #expect(LoadShard(index: 2, count: 4)?.userID(6, prefix: "load") == "load-7")
    }

    @Test func parsingAcceptsZeroBasedIOfN() {
        for (text, index, count) in [("0/1", 0, 1), ("3/4", 3, 4), ("0/10000", 0, 10_000), ("9999/10000", 9_999, 10_000), ("07/8", 7, 8)] {
            #expect(LoadShard(spelling: text) == LoadShard(index: index, count: count), "\(text)")
            #expect(LoadShard(spelling: text)?.index == index && LoadShard(spelling: text)?.count == count)
        }
        #expect(LoadShard(spelling: "2/5")?.description == "2/5")
        #expect(LoadShard.whole == LoadShard(spelling: "0/1"))
    }

    @Test func parsingRefusesOtherSpellings() {
        for text in [
            "", "4/4", "5/4", "1/0", "0/0", "0/10001", "-1/4", "+1/4", " 1/4", "1/4 ", "1 /4", "1/4/5", "1/", "/4", "a/b", "1.0/4", "1",
            "1:4", "99999999999999999999/4", "１/4"
        ] {
            #expect(LoadShard(spelling: text) == nil, "\(text)")
        }
        #expect(LoadShard(index: -1, count: 4) == nil && LoadShard(index: 0, count: 0) == nil && LoadShard(index: 4, count: 4) == nil)
    }

    @Test func environmentGivesTheIndexedJobsShard() {
        let job = ["JOB_COMPLETION_INDEX": "2"]
        #expect(LoadShard.fromEnvironment([:], shards: nil) == .success(nil))
        #expect(LoadShard.fromEnvironment(job, shards: 4) == .success(LoadShard(index: 2, count: 4)))
        #expect(LoadShard.fromEnvironment(["JOB_COMPLETION_INDEX": "0"], shards: 1) == .success(LoadShard.whole))
        #expect(LoadShard.fromEnvironment(job, shards: nil) == .failure(.indexWithoutShards(index: "2")))
        #expect(LoadShard.fromEnvironment([:], shards: 4) == .failure(.noIndex(shards: 4)))
        #expect(LoadShard.fromEnvironment(job, shards: 2) == .failure(.indexOutOfRange(index: 2, shards: 2)))
        #expect(LoadShard.fromEnvironment(job, shards: 0) == .failure(.shardsOutOfRange(0)))
        #expect(LoadShard.fromEnvironment(job, shards: 10_001) == .failure(.shardsOutOfRange(10_001)))
        for bad in ["", "x", "-1", " 1", "1.0"] {
            #expect(LoadShard.fromEnvironment(["JOB_COMPLETION_INDEX": bad], shards: 4) == .failure(.badIndex(bad)), "\(bad)")
        }
    }

    @Test func anExplicitShardWinsOverTheEnvironment() {
        let job = ["JOB_COMPLETION_INDEX": "2"]
        #expect(LoadShard.resolve(spelling: "1/4", shards: nil, environment: job) == .success(LoadShard(index: 1, count: 4)))
        #expect(LoadShard.resolve(spelling: "1/4", shards: 4, environment: job) == .success(LoadShard(index: 1, count: 4)))
        #expect(LoadShard.resolve(spelling: nil, shards: 4, environment: job) == .success(LoadShard(index: 2, count: 4)))
        #expect(LoadShard.resolve(spelling: nil, shards: nil, environment: [:]) == .success(nil))
        #expect(LoadShard.resolve(spelling: "4/4", shards: nil, environment: [:]) == .failure(.badSpelling("4/4")))
        let disagree = LoadShard.resolve(spelling: "1/4", shards: 3, environment: [:])
        #expect(disagree == .failure(.shardsDisagree(shard: LoadShard(index: 1, count: 4) ?? .whole, shards: 3)))
    }

    @Test func errorsSayWhatToGive() {
        #expect(LoadShardError.noIndex(shards: 4).description.contains("JOB_COMPLETION_INDEX"))
        #expect(LoadShardError.noIndex(shards: 4).description.contains("--shard I/4"))
        #expect(LoadShardError.indexWithoutShards(index: "3").description.contains("--shards"))
        #expect(LoadShardError.indexOutOfRange(index: 4, shards: 4).description.contains("0 to 3"))
        #expect(LoadShardError.badSpelling("x").description.contains("0/4"))
    }
}
