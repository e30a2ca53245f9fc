// bench/gate-response-parser: GateResponseFramer (the proxy's upstream answer parser) against
// NIO's HTTPResponseDecoder (llhttp) on the same byte streams. See README.md; run with run.sh.
//
//   GateResponseParserBench [rounds]      timing and allocations (default 9 rounds after a warm-up)
//   GateResponseParserBench differences   what each makes of edge cases

import NIOCore
import NIOEmbedded
import NIOHTTP1

#if canImport(Glibc)
    import Glibc
#endif

// MARK: allocations

/// The count kept by malloc-counter.c when it is preloaded (run.sh); nil without it.
let allocationCounter: (@convention(c) () -> Int)? = {
    guard let handle = dlopen(nil, RTLD_NOW), let symbol = dlsym(handle, "gate_bench_allocations") else { return nil }
    return unsafeBitCast(symbol, to: (@convention(c) () -> Int).self)
}()

func allocations() -> Int { allocationCounter?() ?? 0 }

// MARK: one measured run

enum Variant: String, CaseIterable {
    case framerBare = "framer, bare"
    case framerChannel = "framer in EmbeddedChannel"
    case decoderChannel = "HTTPResponseDecoder in EmbeddedChannel"
    /// The part of the decoder's figure spent telling it about the requests (the writes alone).
    case decoderTold = "(of which: the request heads written to tell the decoder)"
}

struct Sample {
    var nanosecondsPerAnswer: Double
    var allocationsPerAnswer: Double
}

let requestHead = HTTPClientRequestPart.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: "/"))

/// Fresh, uniquely owned buffers for one run (made before the clock starts), last read first.
func freshReads(_ workload: Workload) -> [ByteBuffer] {
    let allocator = ByteBufferAllocator()
    return workload.reads.reversed().map { allocator.buffer(bytes: $0) }
}

@inline(never)
func measure(_ variant: Variant, _ workload: Workload, relay: Bool) throws -> Sample {
    let tally = Tally()
    var reads = freshReads(workload)
    let clock = ContinuousClock()
    var elapsed = Duration.zero
    var allocated = 0
    switch variant {
    case .framerBare:
        var driver = FramerDriver(requestIsHead: false, relay: relay, tally: tally)
        let before = allocations()
        let start = clock.now
        while var read = reads.popLast() {
            try driver.feed(&read)
        }
        elapsed = clock.now - start
        allocated = allocations() - before
    case .framerChannel:
        let channel = EmbeddedChannel(handler: FramerHandler(driver: FramerDriver(requestIsHead: false, relay: relay, tally: tally)))
        let before = allocations()
        let start = clock.now
        while let read = reads.popLast() {
            try channel.writeInbound(read)
        }
        elapsed = clock.now - start
        allocated = allocations() - before
        _ = try channel.finish()
    case .decoderChannel:
        let channel = try decoderChannel(sink: DecoderSink(relay: relay, tally: tally))
        var index = 0
        let before = allocations()
        let start = clock.now
        while let read = reads.popLast() {
            for _ in 0..<workload.requestsBefore[index] { channel.write(requestHead, promise: nil) }
            try channel.writeInbound(read)
            index += 1
        }
        elapsed = clock.now - start
        allocated = allocations() - before
        _ = try channel.finish()
    case .decoderTold:
        let channel = try decoderChannel(sink: DecoderSink(relay: relay, tally: tally))
        let before = allocations()
        let start = clock.now
        for index in workload.reads.indices {
            for _ in 0..<workload.requestsBefore[index] { channel.write(requestHead, promise: nil) }
        }
        elapsed = clock.now - start
        allocated = allocations() - before
        _ = try? channel.finish()
        return Sample(
            nanosecondsPerAnswer: nanoseconds(elapsed) / Double(workload.answers),
            allocationsPerAnswer: Double(allocated) / Double(workload.answers))
    }
    guard tally.answers == workload.answers, tally.heads == workload.answers else {
        fatalError("\(variant.rawValue) on \(workload.name): \(tally.answers) answers, \(tally.heads) heads, expected \(workload.answers)")
    }
    sink &+= tally.checksum &+ tally.bodyBytes &+ tally.relayedBytes
    return Sample(
        nanosecondsPerAnswer: nanoseconds(elapsed) / Double(workload.answers),
        allocationsPerAnswer: Double(allocated) / Double(workload.answers))
}

nonisolated(unsafe) var sink = 0

func nanoseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1e9 + Double(duration.components.attoseconds) / 1e9
}

// MARK: statistics

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

func format(_ value: Double, _ digits: Int = 0) -> String {
    let scale = pow(10.0, Double(digits))
    let rounded = (value * scale).rounded() / scale
    return digits == 0 ? String(Int(rounded)) : String(rounded)
}

// MARK: the run

/// The variants measured: all, or those whose name contains $BENCH_VARIANT (for profiling one).
let variants = Variant.allCases.filter { variant in
    ProcessInfoShim.environment("BENCH_VARIANT").map { variant.rawValue.contains($0) } ?? true
}

enum ProcessInfoShim {
    static func environment(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }
}

func benchmark(rounds: Int) throws {
    print(
        "GateResponseFramer against NIO's HTTPResponseDecoder: \(rounds) rounds after one warm-up,"
            + " variants in turn (order reversed every other round)")
    print(
        "allocations counted: \(allocationCounter == nil ? "no (run through run.sh to preload malloc-counter.so)" : "yes (malloc-counter.so)")"
    )
    for relay in [false, true] {
        print("")
        print(
            relay
                ? "## Relay: parse, and make the visitor's bytes (head written again, small body joined, chunks re-framed for the decoder)"
                : "## Parse only: events counted")
        print("")
        print("| workload | variant | ns/answer (median) | min | max | allocations/answer |")
        print("| --- | --- | ---: | ---: | ---: | ---: |")
        var ratioLines: [String] = []
        for workload in Workloads.all where ProcessInfoShim.environment("BENCH_WORKLOAD").map({ workload.name.contains($0) }) ?? true {
            var samples: [Variant: [Sample]] = [:]
            for round in 0...rounds {
                let order = round % 2 == 0 ? variants : variants.reversed()
                for variant in order {
                    let sample = try measure(variant, workload, relay: relay)
                    if round > 0 { samples[variant, default: []].append(sample) }
                }
            }
            for variant in variants {
                let times = samples[variant]!.map(\.nanosecondsPerAnswer)
                let allocs = median(samples[variant]!.map(\.allocationsPerAnswer))
                print(
                    "| \(workload.name) | \(variant.rawValue) | \(format(median(times))) | \(format(times.min()!)) | \(format(times.max()!)) | \(format(allocs, 2)) |"
                )
            }
            // the ratio in each round (decoder / framer, both in a channel), then their median and range
            guard variants.count == Variant.allCases.count else { continue }
            let ratios = zip(samples[.decoderChannel]!, samples[.framerChannel]!).map { $0.nanosecondsPerAnswer / $1.nanosecondsPerAnswer }
            let bareRatios = zip(samples[.decoderChannel]!, samples[.framerBare]!).map { $0.nanosecondsPerAnswer / $1.nanosecondsPerAnswer }
            let fastest =
                samples[.decoderChannel]!.map(\.nanosecondsPerAnswer).min()! / samples[.framerChannel]!.map(\.nanosecondsPerAnswer).min()!
            let allocDifference =
                median(samples[.decoderChannel]!.map(\.allocationsPerAnswer)) - median(samples[.framerChannel]!.map(\.allocationsPerAnswer))
            ratioLines.append(
                "| \(workload.name) | \(format(median(ratios), 2)) (\(format(ratios.min()!, 2))–\(format(ratios.max()!, 2))) | "
                    + "\(format(fastest, 2)) | \(format(median(bareRatios), 2)) | \(allocationCounter == nil ? "n/a" : (allocDifference >= 0 ? "+" : "") + format(allocDifference, 2)) |"
            )
        }
        guard !ratioLines.isEmpty else { continue }
        print("")
        print(
            "| workload | decoder / framer, both in a channel: median (range) of \(rounds) rounds | fastest run / fastest run | decoder / bare framer (median) | allocations/answer, decoder − framer |"
        )
        print("| --- | ---: | ---: | ---: | ---: |")
        for line in ratioLines { print(line) }
    }
    if sink == 42 { print("") }
}

let arguments = CommandLine.arguments.dropFirst()
if arguments.first == "differences" {
    try differences()
} else {
    try benchmark(rounds: arguments.first.flatMap { Int($0) } ?? 9)
}
