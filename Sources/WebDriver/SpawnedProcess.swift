import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A child process started with `posix_spawn`: each of stdin, stdout and stderr on a pipe, the
/// null device, a file or (stderr) stdout's pipe, an optional working directory, and no other
/// descriptor of this process inherited.
///
/// ``ChromedriverProcess`` and the tests start children with it instead of Foundation's
/// `Process`, whose `run()` on Linux (Swift 6.3.1) reads `/proc/self/fd` with a 256-byte
/// over-read of each `dirent` (swift-corelibs-foundation PR #5472, merged after that release).
/// With 1,350 or more descriptors open, as a busy server or the test process has, the read can
/// run off a mapped page: it crashed one clean-clone CI run.
///
/// Thread use: ``readToEnd(_:)``, ``readSome(_:)`` and ``waitForExit()`` block; call them on a
/// thread of their own, not the cooperative pool's. Everything else returns at once and may be
/// called from any thread.
public final class SpawnedProcess: Sendable {
    /// Why a child could not be started.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Where one of the child's standard streams goes.
    public enum Stream: Sendable, Equatable {
        /// A pipe; this process keeps the other end (``stdin``, ``stdout``, ``stderr``).
        case pipe
        /// `/dev/null`.
        case discard
        /// A file, created or truncated (for stdin: read).
        case file(String)
        /// stderr only: the same pipe or file as stdout.
        case sameAsStdout
    }

    /// The child's process id.
    public let pid: pid_t
    /// This process's ends of the pipes: the child's stdin (write), stdout and stderr (read);
    /// nil where the stream is not a pipe.
    public let stdin: Int32?, stdout: Int32?, stderr: Int32?
    /// The wait status once reaped.
    private let reaped = Mutex<Int32?>(nil)

    private init(pid: pid_t, stdin: Int32?, stdout: Int32?, stderr: Int32?) {
        self.pid = pid
        self.stdin = stdin
        self.stdout = stdout
        self.stderr = stderr
    }

    private typealias AddChdir = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
    private typealias AddClosefrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    /// Starts `path` with `arguments` (argv[1…]) and `environment` (nil: this process's), in
    /// `directory` (nil: this process's).
    public static func spawn(
        _ path: String, arguments: [String], environment: [String: String]? = nil, directory: String? = nil,
        stdin: Stream = .pipe, stdout: Stream = .pipe, stderr: Stream = .pipe
    ) throws -> SpawnedProcess {
        // glibc 2.29+/2.34+ extensions the Glibc module does not declare
        let libc = dlopen(nil, RTLD_NOW)
        guard let chdirSymbol = dlsym(libc, "posix_spawn_file_actions_addchdir_np"),
            let closefromSymbol = dlsym(libc, "posix_spawn_file_actions_addclosefrom_np")
        else {
            throw Failure(description: "this C library has no posix_spawn_file_actions_addchdir_np/addclosefrom_np")
        }
        let addChdir = unsafeBitCast(chdirSymbol, to: AddChdir.self)
        let addClosefrom = unsafeBitCast(closefromSymbol, to: AddClosefrom.self)
        // A child that exits before reading its input must not take this process down on write.
        signal(SIGPIPE, SIG_IGN)

        var opened: [Int32] = []
        var kept: Set<Int32> = []
        defer { for fd in opened where !kept.contains(fd) { close(fd) } }
        func makePipe() throws -> (read: Int32, write: Int32) {
            var fds: [Int32] = [-1, -1]
            guard pipe(&fds) == 0 else { throw Failure(description: "pipe failed: errno \(errno)") }
            opened += fds
            // not inherited by children other threads start meanwhile (pipe2 is not in the Glibc module)
            for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            return (fds[0], fds[1])
        }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        /// Sets the child's `target` descriptor; gives this process's end of a pipe.
        func wire(_ stream: Stream, to target: Int32) throws -> Int32? {
            switch stream {
            case .pipe:
                let p = try makePipe()
                let (childEnd, ours) = target == 0 ? (p.read, p.write) : (p.write, p.read)
                posix_spawn_file_actions_adddup2(&actions, childEnd, target)
                kept.insert(ours)
                return ours
            case .discard:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
                return nil
            case .file(let file):
                let flags = target == 0 ? O_RDONLY : (O_WRONLY | O_CREAT | O_TRUNC)
                posix_spawn_file_actions_addopen(&actions, target, file, flags, 0o644)
                return nil
            case .sameAsStdout:
                guard target == 2 else { throw Failure(description: ".sameAsStdout is for stderr only") }
                posix_spawn_file_actions_adddup2(&actions, 1, 2)
                return nil
            }
        }
        let input = try wire(stdin, to: 0)
        let output = try wire(stdout, to: 1)
        let errors = try wire(stderr, to: 2)
        _ = addClosefrom(&actions, 3)
        if let directory, addChdir(&actions, directory) != 0 { throw Failure(description: "cannot change to \(directory)") }

        let environment = environment ?? ProcessInfo.processInfo.environment
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for p in argv + envp { free(p) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, path, &actions, nil, argv, envp)
        guard result == 0 else {
            kept.removeAll()
            throw Failure(description: "posix_spawn \(path) failed: \(String(cString: strerror(result)))")
        }
        return SpawnedProcess(pid: pid, stdin: input, stdout: output, stderr: errors)
    }

    /// Runs `path` to its end (blocks): `input` on its stdin (written from a thread of its own,
    /// so a child that answers before it has read everything cannot wedge both), stdout and
    /// stderr (by default) together in `output`.
    public static func run(
        _ path: String, arguments: [String], input: [UInt8] = [], environment: [String: String]? = nil, directory: String? = nil,
        stderr: Stream = .sameAsStdout
    ) throws -> (status: Int32, output: Data) {
        let child = try spawn(
            path, arguments: arguments, environment: environment, directory: directory, stderr: stderr == .pipe ? .sameAsStdout : stderr)
        Thread.detachNewThread { child.writeInputAndClose(input) }
        let output = readToEnd(child.stdout)
        return (child.waitForExit(), output)
    }

    /// Writes `bytes` to the child's stdin pipe and closes it (a child gone already is not an
    /// error).
    public func writeInputAndClose(_ bytes: [UInt8]) {
        guard let stdin else { return }
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { write(stdin, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            if n <= 0 { break }
            sent += n
        }
        close(stdin)
    }

    /// Reads `fd` to its end and closes it (blocks).
    public static func readToEnd(_ fd: Int32?) -> Data {
        guard let fd else { return Data() }
        var data = Data()
        while true {
            let chunk = readSome(fd)
            if chunk.isEmpty { break }
            data.append(chunk)
        }
        close(fd)
        return data
    }

    /// What one `read` of `fd` gives (blocks until something comes); empty at its end or on an
    /// error.
    public static func readSome(_ fd: Int32?) -> Data {
        guard let fd else { return Data() }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            return n > 0 ? Data(buffer[0..<n]) : Data()
        }
    }

    /// Whether the child is still running (reaps it when it has ended).
    public var isRunning: Bool {
        reaped.withLock { status in
            guard status == nil else { return false }
            var st: Int32 = 0
            let r = waitpid(pid, &st, WNOHANG)
            if r == pid { status = st }
            return r == 0
        }
    }

    /// Sends `signal` unless the child has been reaped (its pid may be reused then).
    public func send(_ signal: Int32) {
        reaped.withLock { status in
            if status == nil { _ = kill(pid, signal) }
        }
    }

    /// SIGTERM, as `Process.terminate()`.
    public func terminate() { send(SIGTERM) }

    /// SIGINT, as `Process.interrupt()`.
    public func interrupt() { send(SIGINT) }

    /// Waits for the child to end (blocks) and gives its exit status, or the signal that ended
    /// it (as `Process.terminationStatus`).
    @discardableResult
    public func waitForExit() -> Int32 {
        // Wait without reaping and without the lock (so ``send(_:)`` from another thread is not
        // held up), then reap under the lock.
        if reaped.withLock({ $0 == nil }) {
            var info = siginfo_t()
            while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) < 0, errno == EINTR {}
        }
        let st = reaped.withLock { status -> Int32 in
            if let status { return status }
            var st: Int32 = 0
            while waitpid(pid, &st, 0) < 0, errno == EINTR {}
            status = st
            return st
        }
        let signal = st & 0x7f
        return signal == 0 ? (st >> 8) & 0xff : signal
    }
}
