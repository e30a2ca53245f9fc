import Synchronization
import WaitingRoom

/// Where the `browser` queue-page driver (``QueueItQueuePageMode/browser``) comes from. The
/// driver spawns `chromedriver`, so it lives in its own module, `QueueItBrowser`: an app that
/// links Queue-it links no process spawner. That module installs its maker here
/// (`QueueItBrowserDriver.install()`); until then a `browser` configuration's page driver ends
/// each wait with `.invalidConfiguration` saying so.
package enum QueueItBrowserDriverSlot {
    private static let maker = Mutex<(@Sendable (QueueItConfiguration) -> any QueuePageDriver)?>(nil)

    /// Makes `make` the maker of `browser` page drivers (the last call wins).
    package static func install(_ make: @escaping @Sendable (QueueItConfiguration) -> any QueuePageDriver) {
        maker.withLock { $0 = make }
    }

    /// The browser page driver for `configuration`, or a driver that explains what to link.
    package static func driver(for configuration: QueueItConfiguration) -> any QueuePageDriver {
        if let make = maker.withLock({ $0 }) { return make(configuration) }
        return QueueItMissingBrowserDriver()
    }
}

/// The `browser` page driver when the `QueueItBrowser` module is not installed: every wait ends
/// with `.invalidConfiguration` (field `queuePage`) saying how to get the real one.
struct QueueItMissingBrowserDriver: QueuePageDriver {
    func wait(on page: QueueItQueuePage, context: QueuePageContext) async -> QueuePageResult {
        .failed(
            .invalidConfiguration(
                field: "queuePage",
                "queuePage \"browser\" needs the QueueItBrowser module: link it and call QueueItBrowserDriver.install() at start-up "
                    + "(or pass a QueueItBrowserDriver as the provider's driver), or use queuePage \"follow\" or \"host\"",
                vendor: QueueItConfiguration.vendorID))
    }
}
