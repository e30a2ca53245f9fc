import WaitingRoomLoad

/// `--arrivals`: burst, uniform:SECONDS or poisson:RATE (``WaitingRoomLoad/LoadArrivals``).
extension LoadArrivals: CLIValue {
    init?(commandLineWord word: String) { self.init(spelling: word) }
    var commandLineDescription: String { description }
}

/// `--start-at +SECONDS` (``WaitingRoomLoad/LoadSaleStart``).
extension LoadSaleStart: CLIValue {
    init?(commandLineWord word: String) { self.init(spelling: word) }
    var commandLineDescription: String { description }
}
