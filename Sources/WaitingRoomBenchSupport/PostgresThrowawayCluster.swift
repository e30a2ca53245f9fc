import Foundation
import Synchronization
import WebDriver

#if canImport(Glibc)
    import Glibc
#endif

/// A throwaway PostgreSQL server for tests and benchmarks (`waitingroom bench state`): one per
/// process (``shared``), started on first use, each user in a database of its own
/// (``makeDatabase()``), so tests run in parallel. Not for production: it trusts every local login.
///
/// The server is Debian's `postgresql` package (Scripts/setup installs it): `initdb` and
/// `pg_ctl` from `/usr/lib/postgresql/<version>/bin` (or the `PATH`). Its cluster lives in a
/// new directory under the temporary directory, owned by the `postgres` user when the tests
/// run as root (PostgreSQL refuses to run as root: its commands then go through `runuser`). It
/// listens on 127.0.0.1 on a free port and on a Unix socket in that directory, trusts every
/// local login, and keeps small (`shared_buffers=16MB`). ``stop()`` shuts it down at once and
/// removes the directory; if a test process ends without it, an `atexit` hook does the same.
///
/// Missing binaries are an error telling to run Scripts/setup: the tests fail, never skip.
package actor PostgresThrowawayCluster {
    /// The cluster of this process.
    package static let shared = PostgresThrowawayCluster()

    /// A cluster of its own (not yet started: the first ``makeDatabase()`` starts it).
    package init() {}

    /// A running server.
    package struct Server: Sendable {
        /// The folder with `initdb`, `pg_ctl` and `createdb`.
        package var binaries: String
        /// The cluster's folder: `data/` (the cluster), the Unix socket and the logs.
        package var directory: String
        /// The TCP port on 127.0.0.1.
        package var port: Int
        /// The cluster's data folder.
        package var dataDirectory: String { directory + "/data" }
    }

    /// Why the cluster could not be used.
    package struct Failure: Error, CustomStringConvertible {
        package var description: String
        /// A failure saying `description`.
        package init(description: String) { self.description = description }
    }

    private var starting: Task<Server, any Error>?

    /// The server, started on the first call.
    package func server() async throws -> Server {
        if let starting { return try await starting.value }
        let task = Task { try await Self.start() }
        starting = task
        return try await task.value
    }

    /// A new empty database on the server; returns its URL
    /// (`postgres://postgres@127.0.0.1:PORT/test_…?sslmode=disable&connect_timeout=30`: a machine
    /// busy with a whole test suite has stalled a local connect past the default 10 s).
    package func makeDatabase() async throws -> String {
        let server = try await server()
        let name = "test_" + String(UInt64.random(in: .min ... .max), radix: 16)
        try await Self.run(
            server.binaries + "/createdb", ["-h", server.directory, "-p", "\(server.port)", "-U", "postgres", name],
            in: server.directory, what: "createdb \(name)")
        return "postgres://postgres@127.0.0.1:\(server.port)/\(name)?sslmode=disable&connect_timeout=30"
    }

    /// Shuts the server down at once (`pg_ctl stop -m immediate`) and removes its folder.
    package func stop() async throws {
        guard let starting else { return }
        self.starting = nil
        guard let server = try? await starting.value else { return }
        defer {
            PostgresClusterExit.forget(server.directory)
            try? FileManager.default.removeItem(atPath: server.directory)
        }
        try await Self.run(
            server.binaries + "/pg_ctl", ["-D", server.dataDirectory, "-m", "immediate", "-w", "stop"],
            in: server.directory, what: "pg_ctl stop")
    }

    // MARK: starting

    private static func start() async throws -> Server {
        let binaries = try findBinaries()
        let directory = FileManager.default.temporaryDirectory.path + "/wr-pg-" + UUID().uuidString.prefix(8).lowercased()
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        if getuid() == 0 {
            do {
                try FileManager.default.setAttributes(
                    [.ownerAccountName: "postgres", .groupOwnerAccountName: "postgres"], ofItemAtPath: directory)
            } catch {
                throw Failure(
                    description:
                        "cannot hand \(directory) to the postgres user (\(error)); is the postgresql package installed? Run Scripts/setup")
            }
        }
        var server = Server(binaries: binaries, directory: directory, port: try freePort())
        do {
            try await run(
                binaries + "/initdb",
                ["-D", server.dataDirectory, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-locale", "--no-sync"],
                in: directory, what: "initdb")
            PostgresClusterExit.remember(directory)
            // The free port is found by binding port 0 and closing it: another test (or process)
            // may take it before the server binds it. Then the server stops at once with
            // "Address already in use" in its log, and a new port is tried (three in all).
            var attempt = 1
            while true {
                do {
                    try await startServer(server)
                    break
                } catch {
                    let log = (try? String(contentsOfFile: directory + "/server.log", encoding: .utf8)) ?? ""
                    guard attempt < 3, log.contains("Address already in use") else { throw error }
                    attempt += 1
                    try? FileManager.default.removeItem(atPath: directory + "/server.log")
                    server = Server(binaries: binaries, directory: directory, port: try freePort())
                }
            }
        } catch {
            let log = (try? String(contentsOfFile: directory + "/server.log", encoding: .utf8)) ?? ""
            // only this server: the others of the process (a shared one many tests use) go on
            PostgresClusterExit.stop(directory)
            throw Failure(description: "\(error)" + (log.isEmpty ? "" : "\nserver log:\n" + log))
        }
        return server
    }

    /// `pg_ctl start` of the initialised cluster on the server's port, waiting until it accepts.
    private static func startServer(_ server: Server) async throws {
        let options = "-p \(server.port) -k \(server.directory) -c listen_addresses=127.0.0.1 -c shared_buffers=16MB -c max_connections=300"
        try await run(
            server.binaries + "/pg_ctl",
            ["-D", server.dataDirectory, "-l", server.directory + "/server.log", "-o", options, "-w", "-t", "60", "start"],
            in: server.directory, what: "pg_ctl start")
    }

    /// The folder of `initdb` and `pg_ctl`: the newest `/usr/lib/postgresql/*/bin`, else the
    /// folder a `PATH` entry's `initdb` really lives in.
    private static func findBinaries() throws -> String {
        let files = FileManager.default
        let debian = "/usr/lib/postgresql"
        let versions = ((try? files.contentsOfDirectory(atPath: debian)) ?? [])
            .compactMap { name in Int(name).map { (version: $0, bin: "\(debian)/\(name)/bin") } }
            .filter { files.isExecutableFile(atPath: $0.bin + "/initdb") && files.isExecutableFile(atPath: $0.bin + "/pg_ctl") }
            .sorted { $0.version > $1.version }
        if let newest = versions.first { return newest.bin }
        for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            let initdb = "\(folder)/initdb"
            guard files.isExecutableFile(atPath: initdb) else { continue }
            let real = URL(fileURLWithPath: initdb).resolvingSymlinksInPath().deletingLastPathComponent().path
            if files.isExecutableFile(atPath: real + "/pg_ctl"), files.isExecutableFile(atPath: real + "/createdb") { return real }
        }
        throw Failure(
            description: """
                PostgreSQL's initdb and pg_ctl were not found (looked in /usr/lib/postgresql/*/bin and the PATH). \
                The PostgreSQL state store's tests start a throwaway server: run Scripts/setup (it installs Debian's postgresql package).
                """)
    }

    /// A TCP port on 127.0.0.1 that nothing listens on (the kernel's pick for port 0).
    package static func freePort() throws -> Int {
        guard let port = LoopbackPort.free() else {
            throw Failure(description: "cannot bind a socket to 127.0.0.1:0: errno \(errno)")
        }
        return port
    }

    /// Runs a PostgreSQL command (as the `postgres` user when the tests run as root) on a
    /// thread of its own; throws with its output when it fails.
    ///
    /// `posix_spawn` and `waitpid` rather than Foundation's `Process`, whose wait missed the
    /// exit of `pg_ctl start` (it leaves a daemon behind) and hung.
    private static func run(_ executable: String, _ arguments: [String], in directory: String, what: String) async throws {
        let logPath = directory + "/command-\(UUID().uuidString.prefix(8)).log"
        // `env -C`: in the cluster's folder, which the postgres user can enter (Glibc's
        // `posix_spawn_file_actions_addchdir_np` is not imported into Swift).
        let inFolder = ["/usr/bin/env", "-C", directory, executable] + arguments
        let command = getuid() == 0 ? ["/usr/sbin/runuser", "-u", "postgres", "--"] + inFolder : inFolder
        let status = try await Self.onThread { () throws -> Int32 in
            try spawnAndWait(command, logPath: logPath)
        }
        let output = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(atPath: logPath)
        guard status == 0 else {
            throw Failure(
                description:
                    "\(what) failed (\(status < 0 ? "signal \(-status)" : "exit \(status)")): \(output.trimmingCharacters(in: .whitespacesAndNewlines))"
            )
        }
    }

    /// Starts `command` with its output in `logPath` and the signals at their
    /// defaults, and waits for it: its exit status, or minus the signal that ended it.
    private static func spawnAndWait(_ command: [String], logPath: String) throws -> Int32 {
        let log = open(logPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard log >= 0 else { throw Failure(description: "cannot create \(logPath): errno \(errno)") }
        defer { close(log) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, log, 1)
        posix_spawn_file_actions_adddup2(&actions, log, 2)
        // Nothing else of this process goes with the child: `pg_ctl start` leaves the server
        // running, and a server holding another thread's pipe (a test reading a child's output
        // to its end) would keep that reader, and the whole test process, waiting forever.
        // (glibc's closefrom action is not visible to Swift: every descriptor open now is closed
        // in the child; one another thread opens in the instant before the spawn may still go.)
        // Found by CI: the test process hung at exit, the server holding a CLI test's pipes.
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [] {
            guard let fd = Int32(name), fd > 2, fd != log else { continue }
            posix_spawn_file_actions_addclose(&actions, fd)
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var environment = ProcessInfo.processInfo.environment
        environment["LC_ALL"] = "C"
        environment["LANG"] = "C"
        environment["PGTZ"] = "UTC"
        let argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, command[0], &actions, &attributes, argv, envp)
        guard spawned == 0 else { throw Failure(description: "cannot start \(command[0]): error \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw Failure(description: "waitpid(\(command[0])) failed: errno \(errno)") }
        }
        // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import.
        return status & 0x7f == 0 ? (status >> 8) & 0xff : -(status & 0x7f)
    }
}

/// Stops, when the test process exits, the servers ``PostgresThrowawayCluster`` started and did
/// not stop: SIGQUIT (PostgreSQL's immediate shutdown) to the postmaster named in
/// `postmaster.pid`, a short wait for it to go, and the folder removed. Registered with
/// `atexit` on first use.
enum PostgresClusterExit {
    private static let directories = Mutex<(registered: Bool, paths: Set<String>)>((false, []))

    /// Stops the server in `directory` when the process exits (unless `WAITINGROOM_PG_KEEP`
    /// is set: then it is left running for inspection, and its folder is printed).
    static func remember(_ directory: String) {
        if ProcessInfo.processInfo.environment["WAITINGROOM_PG_KEEP"] != nil {
            FileHandle.standardError.write(
                Data("PostgresThrowawayCluster: WAITINGROOM_PG_KEEP is set; the server in \(directory) is left running\n".utf8))
            return
        }
        let register = directories.withLock { state in
            state.paths.insert(directory)
            defer { state.registered = true }
            return !state.registered
        }
        if register { atexit { PostgresClusterExit.stopAll() } }
    }

    /// `directory` was stopped already.
    static func forget(_ directory: String) {
        _ = directories.withLock { $0.paths.remove(directory) }
    }

    /// Stops every remembered server now and removes its folder.
    static func stopAll() {
        let paths = directories.withLock { state in
            defer { state.paths = [] }
            return state.paths
        }
        for directory in paths { stopServer(in: directory) }
    }

    /// Stops the server in `directory` (if it runs) and removes its folder.
    static func stop(_ directory: String) {
        forget(directory)
        stopServer(in: directory)
    }

    private static func stopServer(in directory: String) {
        if let text = try? String(contentsOfFile: directory + "/data/postmaster.pid", encoding: .utf8),
            let first = text.split(separator: "\n").first, let pid = pid_t(first.trimmingCharacters(in: .whitespaces)), pid > 0
        {
            kill(pid, SIGQUIT)
            for _ in 0..<100 where kill(pid, 0) == 0 { usleep(50_000) }
        }
        try? FileManager.default.removeItem(atPath: directory)
    }
}

extension PostgresThrowawayCluster {
    /// Runs blocking `work` (spawning and reaping a child) on a thread of its own, not on the
    /// cooperative pool; the caller suspends until it ends.
    static func onThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let thread = Thread { continuation.resume(with: Result { try work() }) }
            thread.name = "waitingroom.postgres-cluster"
            thread.start()
        }
    }
}
