/// Why a ``LoadRun`` could not start.
public enum LoadError: Error, CustomStringConvertible {
    /// The plan has a sale start, but the embedded emulator of `vendor` cannot schedule one
    /// (it has no pre-queue; its README says why).
    case noScheduledStart(vendor: String)
    /// The embedded emulator refused the sale start (for example: no such room).
    case scheduleRefused(any Error)

    public var description: String {
        switch self {
        case .noScheduledStart(let vendor): "the \(vendor) emulator has no scheduled start with a pre-queue"
        case .scheduleRefused(let error): "\(error)"
        }
    }
}
