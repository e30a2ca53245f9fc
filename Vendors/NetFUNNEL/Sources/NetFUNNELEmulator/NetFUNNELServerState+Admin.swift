import Foundation
import NetFUNNEL
import WaitingRoom

/// The admin side of the state machine: segment settings, reset, fault and abandonment counts,
/// the state document and the dashboard's figures.
extension NetFUNNELServerState {
    /// The settings of one segment.
    package func segment(project: String, segment: String) -> NetFUNNELEmulatorConfiguration.Segment? {
        configuration.projects[project]?.segments[segment]
    }

    /// Replaces (or adds) a segment; capacity changes take effect at the next poll.
    package mutating func setSegment(project: String, segment: String, _ settings: NetFUNNELEmulatorConfiguration.Segment) {
        configuration.projects[project, default: .init(segments: [:])].segments[segment] = settings
        noteSchedules()
    }

    /// Replaces the whole configuration (tickets of removed segments stay until they end).
    package mutating func setConfiguration(_ configuration: NetFUNNELEmulatorConfiguration) {
        self.configuration = configuration
        noteSchedules()
    }

    /// Forgets every ticket and counter.
    package mutating func reset() {
        tickets = [:]
        completedKeys = []
        completedOrder = []
        completedHead = 0
        runtimes = [:]
        counters = NetFUNNELEmulatorCounters()
    }

    /// Counts a request answered by an injected fault (the state machine is not run).
    /// Counts an injected fault; `request` counts the request too (a delayed request is
    /// counted when it is handled, or as abandoned).
    mutating func countFault(opcode: Int?, request: Bool = true) {
        counters.faultsInjected += 1
        if request { counters.requests[opcode.map(String.init) ?? "other", default: 0] += 1 }
    }

    /// Counts a delayed request whose client gave up before it reached the server.
    mutating func countAbandoned(opcode: Int?) {
        counters.requestsAbandoned += 1
        counters.requests[opcode.map(String.init) ?? "other", default: 0] += 1
    }

    /// Per-segment view for the admin endpoint.
    package func snapshot(now: Date) -> JSONValue {
        var projects: [String: JSONValue] = [:]
        for (projectKey, project) in configuration.projects {
            var segments: [String: JSONValue] = [:]
            for (segmentKey, settings) in project.segments {
                let id = SegmentID(project: projectKey, segment: segmentKey)
                let runtime = runtimes[id] ?? SegmentRuntime()
                segments[segmentKey] = .object([
                    "settings": settings.json,
                    "waiting": .number(Double(runtime.queue.count)),
                    "admitted": .number(Double(runtime.admitted.count)),
                    "admittedTotal": .number(Double(runtime.admittedTotal)),
                    "tps": .string(Self.tpsText(runtime, settings, now: now))
                ])
            }
            projects[projectKey] = .object(["segments": .object(segments)])
        }
        return .object(["projects": .object(projects)])
    }

    /// One segment's live figures for the dashboard.
    package struct SegmentFigures: Sendable, Equatable {
        package var project: String
        package var segment: String
        package var settings: NetFUNNELEmulatorConfiguration.Segment
        package var waiting: Int
        package var inside: Int
        package var admittedTotal: Int
        /// Admissions per second over the segment's `tpsWindowSec`.
        package var tps: Double
    }

    /// Every configured segment's figures, sorted by project and segment.
    package func segmentFigures(now: Date) -> [SegmentFigures] {
        var out: [SegmentFigures] = []
        for (projectKey, project) in configuration.projects.sorted(by: { $0.key < $1.key }) {
            for (segmentKey, settings) in project.segments.sorted(by: { $0.key < $1.key }) {
                let runtime = runtimes[SegmentID(project: projectKey, segment: segmentKey)] ?? SegmentRuntime()
                out.append(
                    SegmentFigures(
                        project: projectKey, segment: segmentKey, settings: settings, waiting: runtime.queue.count,
                        inside: runtime.admitted.count, admittedTotal: runtime.admittedTotal,
                        tps: Double(Self.tpsText(runtime, settings, now: now)) ?? 0))
            }
        }
        return out
    }
}
