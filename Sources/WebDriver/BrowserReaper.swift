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
                    let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline")
                else { continue }
                // arguments are NUL-separated; the marker is the start of one of them
                let arguments = data.split(separator: 0, omittingEmptySubsequences: true)
                if arguments.contains(where: { $0.starts(with: marker) }), kill(pid, SIGKILL) == 0 { killed += 1 }
            }
            return killed
        #else
            return 0
        #endif
    }

    /// Ends the browsers of `directory` and removes the directory once none is left, on a thread
    /// of its own: it finishes even when the caller's task is cancelled (a cancelled task cannot
    /// wait), and it does not hold a thread of the cooperative pool. A browser still starting when
    /// it is first looked for (its command line not yet readable), or still exiting, could write
    /// the directory again after it was removed; so browsers are looked for every 50 ms, and the
    /// directory goes after 200 ms without any (or after 10 s whatever happens).
    public static func endBrowsersAndRemove(_ directory: String) {
        killBrowsers(using: directory)
        let thread = Thread {
            let deadline = ContinuousClock.now + .seconds(10)
            var quiet = 0
            while quiet < 4, ContinuousClock.now < deadline {
                quiet = killBrowsers(using: directory) == 0 ? quiet + 1 : 0
                usleep(50_000)
            }
            try? FileManager.default.removeItem(atPath: directory)
        }
        thread.name = "browser-reaper"
        thread.start()
    }
}
