/// What a ``PollingVendor`` says after one check: the wait is over, or check again.
package enum PollStep: Sendable {
    /// The wait ends with this outcome (a pass in it is kept by the engine).
    case finish(Outcome)
    /// Not yet: check again after this long (`.zero`: at once).
    case checkAgain(after: Duration)
}
