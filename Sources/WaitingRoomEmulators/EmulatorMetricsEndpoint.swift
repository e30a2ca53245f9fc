import Hummingbird
import NIOConcurrencyHelpers
import NIOCore
import Prometheus
import WaitingRoomEmulatorKit

/// The combined emulator's `GET /metrics`: every vendor's figures (``EmulatedVendor/metrics(into:)``,
/// by default the kit's ``EmulatedVendor/standardMetrics(into:)``) in the Prometheus text format,
/// rendered by swift-prometheus's `PrometheusCollectorRegistry`.
///
/// Each scrape fills a fresh registry from the emulators' own counters and status, read at that
/// moment: a counter is exactly the emulator's counter, so it only grows, and starts again from 0
/// when the emulator is reset (which Prometheus reads as a counter reset). Every sample carries
/// the `vendor` label (set here from the emulator's vendor id).
///
/// The number of series stays bounded whatever clients send: per vendor and family at most
/// ``seriesLimit`` label sets, admitted in the order they first appear and kept for the life of
/// the endpoint; a counter sample past that is added to one series of the family whose other
/// labels say `other` (so sums stay right), a gauge sample past that is left out. A sample that
/// would break the format (a bad metric or label name, no label, a negative or non-finite value,
/// a family reported both as a counter and a gauge) is left out too: nothing a vendor reports
/// stops the server.
package final class EmulatorMetricsEndpoint: Sendable {
    /// The route.
    package static let path = "/metrics"
    /// The Prometheus text exposition format, version 0.0.4.
    package static let contentType = "text/plain; version=0.0.4; charset=utf-8"
    /// Label sets kept per vendor and metric family.
    package static let seriesLimit = 1000

    /// The emulators reported, in order.
    package let vendors: [any EmulatedVendor]

    private struct Family: Hashable {
        var vendor: String
        var metric: String
    }

    /// The label sets admitted so far, per vendor and family.
    private let admitted = NIOLockedValueBox<[Family: Set<[String: String]>]>([:])

    /// An endpoint over `vendors`.
    package init(vendors: [any EmulatedVendor]) {
        self.vendors = vendors
    }

    /// Every vendor's samples, read now, with the `vendor` label set and the series bound applied.
    package func samples() -> [EmulatorMetricSample] {
        var all: [EmulatorMetricSample] = []
        for vendor in vendors {
            var own: [EmulatorMetricSample] = []
            vendor.metrics(into: &own)
            for var sample in own {
                sample.labels["vendor"] = vendor.vendorID
                all.append(sample)
            }
        }
        return bounded(all)
    }

    /// The scrape: ``samples()`` in the Prometheus text format.
    package func text() -> String {
        Self.render(samples())
    }

    /// Adds `GET /metrics` to `router`.
    package func addRoutes(to router: Router<BasicRequestContext>) {
        router.get(RouterPath(Self.path)) { _, _ -> Response in
            let text = self.text()
            var buffer = ByteBufferAllocator().buffer(capacity: text.utf8.count)
            buffer.writeString(text)
            return Response(
                status: .ok, headers: [.contentType: Self.contentType, .cacheControl: "no-store"],
                body: ResponseBody(byteBuffer: buffer))
        }
    }

    /// `samples` in the Prometheus text format, through a fresh `PrometheusCollectorRegistry`:
    /// one HELP and TYPE line per family (the first sample of a family gives its HELP text and
    /// kind), labels in the order `vendor`, `scope`, `room`, then by name. Counter samples with
    /// the same labels are added up; for gauges the last one counts. Samples that would break the
    /// format are left out (see the type's documentation).
    package static func render(_ samples: [EmulatorMetricSample]) -> String {
        let registry = PrometheusCollectorRegistry()
        var families: [String: EmulatorMetric] = [:]
        for sample in samples {
            guard isMetricName(sample.metric.name), !sample.labels.isEmpty,
                sample.labels.keys.allSatisfy(isLabelName), sample.value.isFinite
            else { continue }
            let family = families[sample.metric.name] ?? sample.metric
            families[sample.metric.name] = family
            guard family.kind == sample.metric.kind else { continue }
            let help = family.help.isEmpty ? "\(family.name), as the emulator reports it." : family.help
            let labels = ordered(sample.labels)
            // the full name as the metric name, no unit part: the name is used as given
            let descriptor = MetricNameDescriptor(metricName: family.name, unitName: "", helpText: help)
            switch family.kind {
            case .counter:
                guard sample.value >= 0 else { continue }
                let counter = registry.makeCounter(descriptor: descriptor, labels: labels)
                if let whole = Int64(exactly: sample.value) {
                    counter.increment(by: whole)
                } else {
                    counter.increment(by: sample.value)
                }
            case .gauge:
                registry.makeGauge(descriptor: descriptor, labels: labels).set(sample.value)
            }
        }
        return registry.emitToString()
    }

    /// Keeps at most ``seriesLimit`` label sets per vendor and family (see the type's documentation).
    private func bounded(_ samples: [EmulatorMetricSample]) -> [EmulatorMetricSample] {
        admitted.withLockedValue { admitted in
            var kept: [EmulatorMetricSample] = []
            var folded: [Family: Int] = [:]
            for sample in samples {
                let family = Family(vendor: sample.labels["vendor"] ?? "", metric: sample.metric.name)
                if admitted[family, default: []].contains(sample.labels) {
                    kept.append(sample)
                } else if admitted[family, default: []].count < Self.seriesLimit {
                    admitted[family, default: []].insert(sample.labels)
                    kept.append(sample)
                } else if sample.metric.kind == .counter {
                    if let index = folded[family] {
                        kept[index].value += sample.value
                    } else {
                        var labels = sample.labels.mapValues { _ in "other" }
                        labels["vendor"] = family.vendor
                        folded[family] = kept.count
                        kept.append(EmulatorMetricSample(sample.metric, labels: labels, value: sample.value))
                    }
                }
            }
            return kept
        }
    }

    private static let labelOrder = ["vendor": 0, "scope": 1, "room": 2]

    private static func ordered(_ labels: [String: String]) -> [(String, String)] {
        labels.sorted { a, b in
            let (x, y) = (labelOrder[a.key] ?? 3, labelOrder[b.key] ?? 3)
            return x != y ? x < y : a.key < b.key
        }.map { ($0.key, $0.value) }
    }

    /// `[a-zA-Z_:][a-zA-Z0-9_:]*`.
    static func isMetricName(_ name: String) -> Bool {
        guard let first = name.utf8.first, !isDigit(first) else { return false }
        return name.utf8.allSatisfy { isWordByte($0) || $0 == UInt8(ascii: ":") }
    }

    /// `[a-zA-Z_][a-zA-Z0-9_]*`, not starting with `__` (reserved by Prometheus).
    static func isLabelName(_ name: String) -> Bool {
        guard let first = name.utf8.first, !isDigit(first), !name.hasPrefix("__") else { return false }
        return name.utf8.allSatisfy(isWordByte)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private static func isWordByte(_ byte: UInt8) -> Bool {
        isDigit(byte) || byte == UInt8(ascii: "_") || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "z"))
    }
}
