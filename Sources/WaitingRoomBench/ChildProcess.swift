import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A child process run to its end for a benchmark, with the operating system's own account of it:
/// wall time from spawn to reaping, and the child's peak resident set (`wait4`'s `ru_maxrss`).
///
/// Output goes to `/dev/null` (or a file): the figures must not depend on how fast a pipe is read.
struct ChildProcess {
    /// What one finished run cost.
    struct Run: Sendable {
        /// The exit status, or 128 + the signal that ended it.
        var status: Int32
        /// Spawn to reaped.
        var wall: Duration
        /// Peak resident set size of the child, in bytes. A floor of it is the parent's resident
        /// set when it spawned (Linux carries the high-water mark over `exec`), so it says
        /// something only for children that grow well past the parent.
        var peakResidentBytes: Int
    }

    /// Why a child could not be run.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The executable (an absolute path, or a name looked up in `PATH`).
    var executable: String
    /// The arguments after the executable's name.
    var arguments: [String]
    /// Where standard output goes (`/dev/null` when nil).
    var outputPath: String?

    /// The path of the running executable (`/proc/self/exe` resolved), for spawning ourselves.
    static var currentExecutable: String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return CommandLine.arguments.first }
        return String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `name` resolved in `PATH`, or nil when it is not there.
    static func which(_ name: String) -> String? {
        if name.contains("/") { return access(name, X_OK) == 0 ? name : nil }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    /// Runs the child on a thread of its own (the wait blocks that thread, not the cooperative
    /// pool) and returns what it cost.
    func run() async throws -> Run {
        let child = self
        return try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try child.runBlocking() }) }
            thread.start()
        }
    }

    /// Spawns the child, waits for it (blocking the calling thread) and returns what it cost.
    func runBlocking() throws -> Run {
        try start().waitBlocking()
    }

    /// A child that was spawned and not yet reaped.
    struct Started: Sendable {
        /// The child's process id.
        var pid: pid_t
        /// The executable's resolved path (for messages).
        var path: String
        /// When it was spawned.
        var started: ContinuousClock.Instant

        /// The child's peak resident set so far (`VmHWM` in `/proc/<pid>/status`), nil when unreadable.
        var peakResidentBytes: Int? {
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
            for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                guard fields.count >= 2, let kib = Int(fields[1]) else { return nil }
                return kib * 1024
            }
            return nil
        }

        /// Sends `signal` to the child.
        func send(_ signal: Int32) {
            kill(pid, signal)
        }

        /// Waits for the child (blocking the calling thread) and returns what it cost.
        func waitBlocking() throws -> Run {
            var status: Int32 = 0
            var usage = rusage()
            while wait4(pid, &status, 0, &usage) < 0 {
                guard errno == EINTR else { throw Failure(description: "\(path): wait4 failed (\(String(cString: strerror(errno))))") }
            }
            let wall = ContinuousClock.now - started
            let exited = status & 0x7f == 0
            let code = exited ? (status >> 8) & 0xff : 128 + (status & 0x7f)
            return Run(status: code, wall: wall, peakResidentBytes: Int(usage.ru_maxrss) * 1024)
        }

        /// Waits for the child on a thread of its own (not the cooperative pool).
        func wait() async throws -> Run {
            let child = self
            return try await withCheckedThrowingContinuation { continuation in
                let thread = Thread { continuation.resume(with: Result { try child.waitBlocking() }) }
                thread.start()
            }
        }
    }

    /// Spawns the child and returns at once; the caller must reap it (`wait`/`waitBlocking`).
    func start() throws -> Started {
        guard let path = Self.which(executable) else { throw Failure(description: "\(executable): not found") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        let environment = ProcessInfo.processInfo.environment.map { "\($0.key)=\($0.value)" }
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup($0) } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let started = ContinuousClock.now
        let spawned = posix_spawn(&pid, path, &actions, nil, argv, envp)
        guard spawned == 0 else { throw Failure(description: "\(path): posix_spawn failed (\(String(cString: strerror(spawned))))") }
        return Started(pid: pid, path: path, started: started)
    }
}
