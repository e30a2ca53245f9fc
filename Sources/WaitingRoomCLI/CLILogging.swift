import Foundation
import Logging

/// Logging for the CLI: warnings and errors to stderr by default; `WR_LOG_LEVEL=debug` for more.
enum CLILogging {
    static func logger(label: String) -> Logger {
        var logger = Logger(label: label)
        logger.logLevel = level
        return logger
    }

    static var level: Logger.Level {
        if let raw = ProcessInfo.processInfo.environment["WR_LOG_LEVEL"], let level = Logger.Level(rawValue: raw) { return level }
        return .warning
    }
}
