import Foundation
import WebDriver

#if canImport(Glibc)
    import Glibc
#endif

/// Debian's nginx or Caddy, started by a test on a free loopback port with the file this
/// repository ships (`deploy/nginx/waitingroom.conf.template` rendered by `envsubst`,
/// `deploy/caddy/Caddyfile` read with its environment variables), in front of an app and a gate
/// in auth mode. Everything it writes lives in a directory of its own, removed at ``stop()``.
public final class DeployedProxy: Sendable {
    public enum Kind: String, Sendable, CaseIterable, CustomStringConvertible {
        case nginx, caddy
        public var description: String { rawValue }
    }

    public let kind: Kind
    /// Where it listens (127.0.0.1).
    public let port: Int
    let process: SpawnedProcess
    let directory: String

    init(kind: Kind, port: Int, process: SpawnedProcess, directory: String) {
        self.kind = kind
        self.port = port
        self.process = process
        self.directory = directory
    }

    /// The repository's root (where `deploy/` is).
    public static var packageRoot: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    }

    /// Whether the proxy's program is installed (`Scripts/setup` installs both).
    public static func isInstalled(_ kind: Kind) -> Bool {
        switch kind {
        case .nginx:
            FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx")
                && FileManager.default.isExecutableFile(atPath: "/usr/bin/envsubst")
        case .caddy: FileManager.default.isExecutableFile(atPath: "/usr/bin/caddy")
        }
    }

    /// Starts `kind` listening on a free port of 127.0.0.1, forwarding to the app at
    /// `127.0.0.1:upstreamPort` once the gate at `127.0.0.1:gatePort` says yes.
    /// With `port`, on that one (picked with ``LoopbackHTTPClient/freePort()`` by a test that must
    /// name it to the gate first).
    /// `gateAddress` replaces `127.0.0.1:gatePort` as `WAITINGROOM_GATE` (e.g. `unix:PATH` for
    /// nginx, `unix//PATH` for Caddy: a gate on a socket file).
    public static func start(
        _ kind: Kind, upstreamPort: Int, gatePort: Int, gateAddress: String? = nil, port chosen: Int? = nil
    ) async throws -> DeployedProxy {
        let directory = NSTemporaryDirectory() + "waitingroom-\(kind)-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o755])
        var lastError: (any Error)?
        // a port picked free can be taken before the proxy binds it: try a few
        for _ in 0..<5 {
            let port = try chosen ?? LoopbackHTTPClient.freePort()
            do {
                let process = try launch(
                    kind, port: port, upstreamPort: upstreamPort, gate: gateAddress ?? "127.0.0.1:\(gatePort)", directory: directory)
                do {
                    try await LoopbackHTTPClient.waitUntilListening(port: port, timeout: 15)
                    guard process.isRunning else { throw LoopbackHTTPClient.Failure(description: "\(kind) exited at start") }
                    return DeployedProxy(kind: kind, port: port, process: process, directory: directory)
                } catch {
                    process.terminate()
                    _ = await DedicatedWait.exit(process)
                    throw error
                }
            } catch {
                lastError = error
            }
        }
        throw LoopbackHTTPClient.Failure(description: "\(kind) did not start: \(lastError.map { "\($0)" } ?? "?"); log: \(log(directory))")
    }

    static func launch(_ kind: Kind, port: Int, upstreamPort: Int, gate: String, directory: String) throws -> SpawnedProcess {
        var environment = ProcessInfo.processInfo.environment
        environment["WAITINGROOM_LISTEN"] = kind == .nginx ? "127.0.0.1:\(port)" : ":\(port)"
        environment["WAITINGROOM_UPSTREAM"] = "127.0.0.1:\(upstreamPort)"
        environment["WAITINGROOM_GATE"] = gate
        switch kind {
        case .nginx:
            // rendered as the official image and deploy/README.md do: envsubst with the three names
            let template = try String(contentsOfFile: packageRoot + "/deploy/nginx/waitingroom.conf.template", encoding: .utf8)
            let rendered = try SpawnedProcess.run(
                "/usr/bin/envsubst", arguments: ["${WAITINGROOM_LISTEN} ${WAITINGROOM_UPSTREAM} ${WAITINGROOM_GATE}"],
                input: Array(template.utf8), environment: environment)
            guard rendered.status == 0 else { throw LoopbackHTTPClient.Failure(description: "envsubst failed") }
            try rendered.output.write(to: URL(fileURLWithPath: directory + "/waitingroom.conf"))
            let main = """
                pid \(directory)/nginx.pid;
                error_log \(directory)/error.log notice;
                worker_processes 1;
                events {
                    worker_connections 512;
                }
                http {
                    access_log \(directory)/access.log;
                    client_body_temp_path \(directory)/client_body_temp;
                    proxy_temp_path \(directory)/proxy_temp;
                    fastcgi_temp_path \(directory)/fastcgi_temp;
                    uwsgi_temp_path \(directory)/uwsgi_temp;
                    scgi_temp_path \(directory)/scgi_temp;
                    include \(directory)/waitingroom.conf;
                }
                """
            try main.write(toFile: directory + "/nginx.conf", atomically: true, encoding: .utf8)
            return try SpawnedProcess.spawn(
                "/usr/sbin/nginx",
                arguments: [
                    "-p", directory, "-e", directory + "/error.log",
                    "-c", directory + "/nginx.conf", "-g", "daemon off;"
                ],
                environment: environment, directory: directory, stdin: .discard, stdout: .discard, stderr: .discard)
        case .caddy:
            environment["XDG_CONFIG_HOME"] = directory + "/config"
            environment["XDG_DATA_HOME"] = directory + "/data"
            environment["HOME"] = directory
            return try SpawnedProcess.spawn(
                "/usr/bin/caddy",
                arguments: [
                    "run", "--config", packageRoot + "/deploy/caddy/Caddyfile",
                    "--adapter", "caddyfile"
                ],
                environment: environment, directory: directory, stdin: .discard, stdout: .discard,
                stderr: .discard)
        }
    }

    /// The proxy's error log (for a failure message).
    public var log: String { Self.log(directory) }

    static func log(_ directory: String) -> String {
        (try? String(contentsOfFile: directory + "/error.log", encoding: .utf8)).map { String($0.suffix(2000)) } ?? "(none)"
    }

    /// Stops the proxy (TERM, then waits) and removes its directory.
    public func stop() async {
        process.terminate()
        _ = await DedicatedWait.exit(process)
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Runs `body` with `kind` started; stopped however `body` ends.
    public static func with<T: Sendable>(
        _ kind: Kind, upstreamPort: Int, gatePort: Int, gateAddress: String? = nil, port: Int? = nil,
        _ body: @Sendable (DeployedProxy) async throws -> T
    ) async throws -> T {
        let proxy = try await start(kind, upstreamPort: upstreamPort, gatePort: gatePort, gateAddress: gateAddress, port: port)
        do {
            let result = try await body(proxy)
            await proxy.stop()
            return result
        } catch {
            await proxy.stop()
            throw error
        }
    }
}

/// Waiting for a child's exit on a thread of its own (the wait blocks).
enum DedicatedWait {
    static func exit(_ process: SpawnedProcess) async -> Int32 {
        await withCheckedContinuation { (continuation: CheckedContinuation<Int32, Never>) in
            let thread = Thread { continuation.resume(returning: process.waitForExit()) }
            thread.start()
        }
    }
}
