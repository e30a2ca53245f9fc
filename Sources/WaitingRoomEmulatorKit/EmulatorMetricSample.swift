/// One value of one ``EmulatorMetric`` with its labels: what ``EmulatedVendor/metrics(into:)``
/// reports for the combined emulator's `GET /metrics`.
///
/// Labels: `vendor` (set on every sample), `scope` and `room` on per-room figures, `kind` on
/// requests, `code` on replies. Label values come from configuration and the vendor's fixed
/// vocabulary, never from users (no user ids, no keys), so the number of series stays bounded.
package struct EmulatorMetricSample: Sendable, Equatable {
    /// The family.
    package var metric: EmulatorMetric
    /// Label names to values.
    package var labels: [String: String]
    /// The value read at the moment of the call.
    package var value: Double

    /// A sample of `metric`.
    package init(_ metric: EmulatorMetric, labels: [String: String], value: Double) {
        self.metric = metric
        self.labels = labels
        self.value = value
    }
}
