import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Output for the CLI: stdout for results, stderr for diagnostics, and whether each is a terminal.
///
/// Writes go straight to the file descriptors (no C `stdout` globals, which Swift 6 refuses).
public struct Terminal: Sendable {
    /// True when standard output is a terminal.
    public let stdoutIsTTY: Bool
    /// True when standard input is a terminal.
    public let stdinIsTTY: Bool

    /// Reads the current process's descriptors.
    public init() {
        stdoutIsTTY = isatty(1) == 1
        stdinIsTTY = isatty(0) == 1
    }

    /// Writes `text` to standard output.
    public func out(_ text: String) { Self.write(1, text) }
    /// Writes `text` and a newline to standard output.
    public func line(_ text: String) { Self.write(1, text + "\n") }
    /// Writes `text` and a newline to standard error.
    public func error(_ text: String) { Self.write(2, text + "\n") }

    /// Terminal width in columns (80 when unknown).
    public var columns: Int {
        var size = winsize()
        if ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        return 80
    }

    /// Writes all of `text` to `fd`, unbuffered; a write interrupted by a signal is retried.
    static func write(_ fd: Int32, _ text: String) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeMutableBytes { buffer in
                Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
            }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            offset += n
        }
    }
}
