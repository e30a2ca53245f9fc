import WaitingRoom

/// The default page driver (``QueueItQueuePageMode/auto``): each page goes to the host when
/// one is attached to ``host`` (``QueueItHostDrivenPageDriver/attach(onShow:)``), and is
/// followed headlessly with ``headless`` (the HTTP-follow driver) otherwise, so a library user
/// who shows no pages waits through the emulator's pages out of the box and never waits on a
/// host that is not there.
package struct QueueItAutoPageDriver: QueuePageDriver {
    /// Where pages go when a host is attached.
    package let host: QueueItHostDrivenPageDriver
    /// Where pages go otherwise.
    package let headless: any QueuePageDriver

    package init(host: QueueItHostDrivenPageDriver, headless: any QueuePageDriver) {
        self.host = host
        self.headless = headless
    }

    package func wait(on page: QueueItQueuePage, context: QueuePageContext) async -> QueuePageResult {
        host.isAttached ? await host.wait(on: page, context: context) : await headless.wait(on: page, context: context)
    }
}
