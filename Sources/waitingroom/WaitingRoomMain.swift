import QueueItBrowser
import WaitingRoomCLI

/// The `waitingroom` executable: everything lives in `WaitingRoomCLI` so tests can reach it.
/// The CLI runs Queue-it's `browser` queue-page driver (an app linking Queue-it does not).
@main
enum WaitingRoomMain {
    static func main() {
        QueueItBrowserDriver.install()
        WaitingRoomCommand.runFromCommandLine()
    }
}
