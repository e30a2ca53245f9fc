import QueueIt

extension QueueItBrowserDriver {
    /// A browser driver for `configuration`: its ``browserPath``, ``chromedriverPath`` and
    /// `followMaxWait` as ``maxWait``.
    package init(configuration: QueueItConfiguration) {
        self.init(
            browserPath: configuration.browserPath, chromedriverPath: configuration.chromedriverPath,
            maxWait: configuration.followMaxWait)
    }

    /// Makes this driver the one a `queuePage` `browser` configuration gets
    /// (``QueueItConfiguration/makePageDriver()``). Call it once at start-up; an app that never
    /// calls it (or never links this module) runs no browser.
    public static func install() {
        QueueItBrowserDriverSlot.install { QueueItBrowserDriver(configuration: $0) }
    }
}
