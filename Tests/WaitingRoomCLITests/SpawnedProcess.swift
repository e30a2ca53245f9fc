import Foundation
import Synchronization

/// A child process started with `posix_spawn`: stdin, stdout and stderr on pipes, a working
/// directory, and no other descriptor of this process inherited.
///
/// ``CLIProcess/run(_:input:environment:timeout:)`` uses it instead of Foundation's `Process`,
/// whose `run()` on Linux (Swift 6.3.1) reads `/proc/self/fd` with a 256-byte over-read of each
/// `dirent` (swift-corelibs-foundation PR #5472, merged after that release). With 1,350 or more
/// descriptors open, as this test process has for a few seconds while every suite starts, the
/// read can run off a mapped page: it crashed one clean-clone CI run.
final class SpawnedProcess: Sendable {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let pid: pid_t
    /// The write end of the child's stdin, the read ends of its stdout and stderr.
    let stdin: Int32, stdout: Int32, stderr: Int32
    /// The wait status once reaped.
    private let reaped = Mutex<Int32?>(nil)

    private init(pid: pid_t, stdin: Int32, stdout: Int32, stderr: Int32) {
        self.pid = pid
        self.stdin = stdin
        self.stdout = stdout
        self.stderr = stderr
    }

    private typealias AddChdir = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
    private typealias AddClosefrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    /// Starts `path` with `arguments` (argv[1…]), `environment`, in `directory`.
    static func spawn(_ path: String, arguments: [String], environment: [String: String], directory: String) throws -> SpawnedProcess {
        // glibc 2.29+/2.34+ extensions the Glibc module does not declare
        let libc = dlopen(nil, RTLD_NOW)
        guard let chdirSymbol = dlsym(libc, "posix_spawn_file_actions_addchdir_np"),
              let closefromSymbol = dlsym(libc, "posix_spawn_file_actions_addclosefrom_np") else {
            throw Failure(description: "this C library has no posix_spawn_file_actions_addchdir_np/addclosefrom_np")
        }
        let addChdir = unsafeBitCast(chdirSymbol, to: AddChdir.self)
        let addClosefrom = unsafeBitCast(closefromSymbol, to: AddClosefrom.self)
        // A child that exits before reading its input must not take this process down on write.
        signal(SIGPIPE, SIG_IGN)

        var pipes: [Int32] = []
        defer { for fd in pipes { close(fd) } }
        func makePipe() throws -> (read: Int32, write: Int32) {
            var fds: [Int32] = [-1, -1]
            guard pipe(&fds) == 0 else { throw Failure(description: "pipe failed: errno \(errno)") }
            pipes += fds
            // not inherited by children other tests start meanwhile (pipe2 is not in the Glibc module)
            for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            return (fds[0], fds[1])
        }
        let input = try makePipe(), output = try makePipe(), errors = try makePipe()

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, input.read, 0)
        posix_spawn_file_actions_adddup2(&actions, output.write, 1)
        posix_spawn_file_actions_adddup2(&actions, errors.write, 2)
        _ = addClosefrom(&actions, 3)
        guard addChdir(&actions, directory) == 0 else { throw Failure(description: "cannot change to \(directory)") }

        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for p in argv + envp { free(p) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, path, &actions, nil, argv, envp)
        guard result == 0 else { throw Failure(description: "posix_spawn \(path) failed: \(String(cString: strerror(result)))") }
        // keep the parent's ends; the deferred close takes the child's
        pipes.removeAll { $0 == input.write || $0 == output.read || $0 == errors.read }
        return SpawnedProcess(pid: pid, stdin: input.write, stdout: output.read, stderr: errors.read)
    }

    /// Writes `bytes` to the child's stdin and closes it (a child gone already is not an error).
    func writeInputAndClose(_ bytes: [UInt8]) {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { write(stdin, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            if n <= 0 { break }
            sent += n
        }
        close(stdin)
    }

    /// Reads `fd` to its end and closes it (blocks: call it on a thread of its own).
    static func readToEnd(_ fd: Int32) -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            if n <= 0 { break }
            data.append(contentsOf: buffer[0..<n])
        }
        close(fd)
        return data
    }

    /// Whether the child is still running (reaps it when it has ended).
    var isRunning: Bool {
        reaped.withLock { status in
            guard status == nil else { return false }
            var st: Int32 = 0
            let r = waitpid(pid, &st, WNOHANG)
            if r == pid { status = st }
            return r == 0
        }
    }

    /// SIGTERM, as `Process.terminate()`.
    func terminate() { kill(pid, SIGTERM) }

    /// Waits for the child to end (blocks: call it on a thread of its own) and gives its exit
    /// status, or the signal that ended it (as `Process.terminationStatus`).
    func waitForExit() -> Int32 {
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
