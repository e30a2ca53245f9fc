import WaitingRoomCLI

/// The `waitingroom` executable: everything lives in `WaitingRoomCLI` so tests can reach it.
@main
enum WaitingRoomMain {
    static func main() {
        WaitingRoomCommand.runFromCommandLine()
    }
}
