import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Ends the browser processes a session directory left behind.
///
/// Chromium is chromedriver's child, but it outlives chromedriver when chromedriver is stopped
/// before it closed the browser: a session that did not start in time (the next try reused the
/// profile the first browser still held), or a `DELETE /session` that failed. Such a browser
/// runs on, reparented to init, for as long as the machine does (one was found 33 minutes
/// after the test run that started it: a Queue-it browser wait cancelled while its session was
/// starting). Each browser of ``HeadlessChromium`` and of Queue-it's browser driver names its own
/// directory in `--user-data-dir`, so the processes whose command line names that directory are
/// that session's, and only them.
public enum BrowserReaper {
    /// Sends SIGKILL to every process whose command line has `--user-data-dir=<directory>/…`
    /// and returns how many it signalled (Linux: read from `/proc`; elsewhere nothing is done).
    @discardableResult
    public static func killBrowsers(using directory: String) -> Int {
        #if os(Linux)
        let marker = Array("--user-data-dir=\(directory)/".utf8)
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return 0 }
        var killed = 0
        for entry in entries {
            guard let pid = Int32(entry), pid != getpid(),
                  let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { continue }
            // arguments are NUL-separated; the marker is the start of one of them
            let arguments = data.split(separator: 0, omittingEmptySubsequences: true)
            if arguments.contains(where: { $0.starts(with: marker) }), kill(pid, SIGKILL) == 0 { killed += 1 }
        }
        return killed
        #else
        return 0
        #endif
    }
}
