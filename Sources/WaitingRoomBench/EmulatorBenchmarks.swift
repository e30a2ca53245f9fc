import Foundation
import Hummingbird
import NetFUNNEL
import WaitingRoom
import WaitingRoomEmulators
import WaitingRoomVendors
import WebDriver

#if canImport(Glibc)
    import Glibc
#endif

/// `waitingroom bench emulators`: the emulators' request rates under `wrk` (keep-alive, loopback)
/// next to two baselines measured in the same run: nginx serving the same reply bytes from a
/// file, and a Hummingbird route serving them from memory on the emulators' own server setup
/// (``StaticReplyServer``). The ratios separate the framework's cost from ours:
/// emulator / nginx, emulator / Hummingbird static, Hummingbird static / nginx.
///
/// Every server is a child process, as deployed and as `bench/wrk.sh` runs them: the emulators
/// (`waitingroom emulate --port 0 --json`) and the static server (`waitingroom bench --serve-static`)
/// from this same binary (``BenchChildServer``), nginx (`daemon off`, a temporary config on a free
/// 127.0.0.1 port), and `wrk`: the bench process's own threads, executor and heap stay out of the
/// measured servers, and the figures are comparable with `bench/wrk.sh`'s. Each child is stopped
/// (SIGTERM) when the suite ends. Without `wrk` or `nginx` the figures are reported as
/// skipped, with the command that installs them.
/// Each target runs twice (order A B C, then C B A) and keeps its better rate.
/// `WR_BENCH_SECONDS` sets each run's length (default 5 s).
package enum EmulatorBenchmarks {
    package typealias Figure = CoreBenchmarks.Figure

    static let install = "apt-get install wrk nginx-light"
    static let threads = 2
    static let connections = 32
    static let netFunnelGoal = "ratio >= 0.5"
    static let queueItGoal = "ratio >= 0.5"

    /// A segment that admits one key and keeps the next waiting for a day; the Queue-it demo room.
    static let configuration = """
        { "netfunnel": { "projects": { "service_1": { "segments": {
            "bench": { "control": "basic", "limit": 1, "timeoutSec": 86400, "retentionSec": 86400 } } } } },
          "queueit": { "customers": { "demo": { "secretKey": "demo-secret-key-0123456789", "rooms": {
            "sale": { "state": "queue", "admitPerSecond": 2, "refreshSeconds": 1 } } } } } }
        """
    static let enqueueBody = #"{"userId":"bench-user","userAgent":"wrk/4 (bench)","sdkVersion":"wrk-bench-1"}"#

    package struct BenchFailure: Error, CustomStringConvertible {
        package var description: String
    }

    /// - Parameter locate: finds a tool's executable (``tool(_:)``; tests pass their own).
    package static func run(locate: (String) -> String? = tool) async -> [Figure] {
        guard let wrk = locate("wrk"), let nginx = locate("nginx") else {
            let missing = ["wrk", "nginx"].filter { locate($0) == nil }.joined(separator: " and ")
            let why = "needs \(missing): \(install)"
            return [
                Figure(name: "NetFUNNEL emulator 5002 vs nginx", value: 0, unit: "req/s", goal: netFunnelGoal, skipped: why),
                Figure(name: "Queue-it emulator enqueue vs nginx", value: 0, unit: "req/s", goal: queueItGoal, skipped: why)
            ]
        }
        guard let executable = BenchChildServer.currentExecutable() else {
            let why = "runs from the waitingroom binary (it starts its servers from it)"
            return [
                Figure(name: "NetFUNNEL emulator 5002 vs nginx", value: 0, unit: "req/s", goal: netFunnelGoal, skipped: why),
                Figure(name: "Queue-it emulator enqueue vs nginx", value: 0, unit: "req/s", goal: queueItGoal, skipped: why)
            ]
        }
        let seconds = max(1, Int(ProcessInfo.processInfo.environment["WR_BENCH_SECONDS"] ?? "") ?? 5)
        do {
            return try await measure(wrk: wrk, nginx: nginx, executable: executable, seconds: seconds)
        } catch {
            return [Figure(name: "emulator benchmarks", value: 0, unit: "req/s", skipped: "failed: \(error)")]
        }
    }

    static func measure(wrk: String, nginx: String, executable: String, seconds: Int) async throws -> [Figure] {
        let directory = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: directory) }
        let www = directory.appendingPathComponent("www")

        let configFile = directory.appendingPathComponent("emulator.json")
        try Data(configuration.utf8).write(to: configFile)
        // the servers run from this same binary in child processes, as deployed and as `bench/wrk.sh` runs them
        let server = try await BenchChildServer.start(
            executable: executable, arguments: ["emulate", "--config", configFile.path, "--port", "0", "--json"],
            name: "emulator", directory: directory)
        var hello: BenchChildServer?
        var nginxProcess: Process?
        do {
            let base = server.baseURL
            let samples = try Samples(base: base)
            let post = try writeStaticFiles(samples, directory: directory)
            let staticServer = try await BenchChildServer.start(
                executable: executable, arguments: ["bench", "--serve-static", www.path], name: "static", directory: directory)
            hello = staticServer
            let helloBase = staticServer.baseURL
            guard let nginxPort = LoopbackPort.free() else { throw BenchFailure(description: "no free port for nginx") }
            let process = try launchNginx(nginx, port: nginxPort, directory: directory)
            nginxProcess = process
            guard await waitForPort(nginxPort) else {
                let log = (try? String(contentsOfFile: "\(directory.path)/logs/error.log", encoding: .utf8)) ?? ""
                throw BenchFailure(description: "nginx did not start: \(log.suffix(300))")
            }
            let nginxBase = "http://127.0.0.1:\(nginxPort)"
            func best(_ targets: [(url: String, script: URL?)]) async throws -> [Double] {
                try await bestRates(targets, wrk: wrk, seconds: seconds)
            }
            let nf = try await best([
                (nginxBase + "/reply.js", nil), (helloBase + "/reply.js", nil), (base + "/ts.wseq?" + samples.check, nil)
            ])
            let qi = try await best([
                (nginxBase + "/enqueue.json", post), (nginxBase + "/enqueue.json", nil), (helloBase + "/enqueue.json", post),
                (samples.enqueueURL, post)
            ])
            await stop(nginx: nginxProcess, hello: hello, server: server)
            return figures(samples, netFunnel: nf, queueIt: qi, seconds: seconds)
        } catch {
            await stop(nginx: nginxProcess, hello: hello, server: server)
            throw error
        }
    }

    /// A new temporary folder with `www`, `logs` and `tmp` in it, all readable by all (nginx's
    /// workers run as `nobody` when started by root).
    static func makeScratchFolder() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "wr-bench-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        for folder in [directory] + ["www", "logs", "tmp"].map(directory.appendingPathComponent) {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        }
        return directory
    }

    /// The emulators' replies the baselines serve again, taken from the running emulator.
    struct Samples {
        /// The query of the NetFUNNEL 5002 check (201 on every request).
        var check: String
        /// The NetFUNNEL emulator's reply to it.
        var netFunnelReply: [UInt8]
        /// Where the Queue-it emulator's enqueue is.
        var enqueueURL: String
        /// The Queue-it emulator's reply to `enqueueBody`.
        var enqueueReply: [UInt8]

        /// NetFUNNEL: takes the one admitted key, queues a second and checks that one; Queue-it:
        /// enqueues one user.
        init(base: String) throws {
            let issue = base + "/ts.wseq?opcode=5101&nfid=0&sid=service_1&aid=bench&js=yes"
            _ = try LoopbackHTTP.exchange(issue)
            let waiting = String(decoding: try LoopbackHTTP.exchange(issue).body, as: UTF8.self)
            guard let key = (try? NetFUNNELReply.parse(waiting))?.key, !key.isEmpty else {
                throw BenchFailure(description: "the NetFUNNEL emulator issued no key: \(waiting)")
            }
            check = "opcode=5002&key=\(key)&nfid=0&prefix=NetFunnel.gRtype%3D5002%3B&ttl=1&sid=service_1&aid=bench&js=yes"
            netFunnelReply = Array(try LoopbackHTTP.exchange(base + "/ts.wseq?" + check).body)
            enqueueURL = base + "/api/mobileapp/queue/demo/sale/enqueue"
            let enqueue = try LoopbackHTTP.exchange(
                enqueueURL, method: "POST", body: Array(enqueueBody.utf8), contentType: "application/json")
            guard enqueue.status == 200 else {
                throw BenchFailure(description: "the Queue-it emulator answered enqueue with \(enqueue.status)")
            }
            enqueueReply = Array(enqueue.body)
        }
    }

    /// Writes the replies into `www` (for nginx and the static server) and `wrk`'s POST script;
    /// the script.
    static func writeStaticFiles(_ samples: Samples, directory: URL) throws -> URL {
        let www = directory.appendingPathComponent("www")
        try Data(samples.netFunnelReply).write(to: www.appendingPathComponent("reply.js"))
        try Data(samples.enqueueReply).write(to: www.appendingPathComponent("enqueue.json"))
        let post = directory.appendingPathComponent("enqueue.lua")
        try Data(
            """
            wrk.method = "POST"
            wrk.body = '\(enqueueBody)'
            wrk.headers["Content-Type"] = "application/json"
            wrk.headers["Accept"] = "application/json"

            """.utf8
        ).write(to: post)
        for file in ["www/reply.js", "www/enqueue.json", "enqueue.lua"] {
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: directory.appendingPathComponent(file).path)
        }
        return post
    }

    /// Starts nginx (in the foreground, as a child) serving `directory`/www on 127.0.0.1:`port`.
    static func launchNginx(_ nginx: String, port: Int, directory: URL) throws -> Process {
        let conf = directory.appendingPathComponent("nginx.conf")
        let dir = directory.path
        try Data(
            """
            daemon off;
            worker_processes \(threads);
            pid \(dir)/nginx.pid;
            error_log \(dir)/logs/error.log;
            events { worker_connections 1024; }
            http {
              access_log off;
              keepalive_requests 1000000;
              client_body_temp_path \(dir)/tmp; proxy_temp_path \(dir)/tmp; fastcgi_temp_path \(dir)/tmp;
              uwsgi_temp_path \(dir)/tmp; scgi_temp_path \(dir)/tmp;
              types { application/javascript js; application/json json; }
              # a POST to a file is 405 in nginx: answer it with the file, as for a GET
              server { listen 127.0.0.1:\(port); root \(dir)/www; error_page 405 =200 $uri; }
            }

            """.utf8
        ).write(to: conf)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: nginx)
        process.arguments = ["-e", "\(dir)/logs/error.log", "-c", conf.path, "-p", dir]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Each target's best of two runs, in the order A B C, then C B A: a load that comes and
    /// goes on a shared machine hits every target alike. Each run has a short warm-up.
    static func bestRates(_ targets: [(url: String, script: URL?)], wrk: String, seconds: Int) async throws -> [Double] {
        func rate(_ url: String, script: URL?) async throws -> Double {
            let extra = script.map { ["-s", $0.path] } ?? []
            _ = try await requestsPerSecond(wrk: wrk, extra + ["-t1", "-c4", "-d1s", url])  // warm-up
            return try await requestsPerSecond(wrk: wrk, extra + ["-t\(threads)", "-c\(connections)", "-d\(seconds)s", url])
        }
        var rates = Array(repeating: 0.0, count: targets.count)
        for index in Array(targets.indices) + targets.indices.reversed() {
            rates[index] = max(rates[index], try await rate(targets[index].url, script: targets[index].script))
        }
        return rates
    }

    /// The figures from the rates: NetFUNNEL's (nginx, Hummingbird static, emulator) and
    /// Queue-it's (nginx POST, nginx GET, Hummingbird static, emulator).
    static func figures(_ samples: Samples, netFunnel nf: [Double], queueIt qi: [Double], seconds: Int) -> [Figure] {
        let (nfNginx, nfHello, nfEmulator) = (nf[0], nf[1], nf[2])
        let (qiNginx, qiNginxGet, qiHello, qiEmulator) = (qi[0], qi[1], qi[2], qi[3])
        let setup = "wrk -t\(threads) -c\(connections) -d\(seconds)s, best of 2"
        return [
            Figure(
                name: "NetFUNNEL emulator 5002 vs nginx static (\(samples.netFunnelReply.count) B, \(setup))", value: nfEmulator,
                unit: "req/s", baseline: nfNginx, goal: netFunnelGoal),
            Figure(
                name: "NetFUNNEL emulator 5002 vs Hummingbird static (same bytes)", value: nfEmulator, unit: "req/s", baseline: nfHello),
            Figure(name: "Hummingbird static reply.js vs nginx static", value: nfHello, unit: "req/s", baseline: nfNginx),
            Figure(
                name: "Queue-it emulator enqueue vs nginx static (same POST, \(samples.enqueueReply.count) B)", value: qiEmulator,
                unit: "req/s",
                baseline: qiNginx, goal: queueItGoal),
            Figure(
                name: "Queue-it emulator enqueue (POST) vs nginx static GET", value: qiEmulator, unit: "req/s", baseline: qiNginxGet),
            Figure(
                name: "Queue-it emulator enqueue vs Hummingbird static (same POST, same bytes)", value: qiEmulator, unit: "req/s",
                baseline: qiHello),
            Figure(
                name: "Hummingbird static enqueue.json vs nginx static (same POST)", value: qiHello, unit: "req/s", baseline: qiNginx)
        ]
    }

    /// `waitingroom bench --serve-static FOLDER [--unix-socket PATH]` (hidden; `bench/wrk.sh`):
    /// serves each file of `folder` at `/{name}` with ``StaticReplyServer`` until stopped, after
    /// printing `{"baseURL": …}`; with `unixSocket`, the same replies on that socket too (the same
    /// Hummingbird setup, its own listener), for a gate that reaches its upstream over a socket.
    /// `announce` gets the `{"baseURL": …}` line.
    package static func serveStatic(folder: String, unixSocket: String?, announce: (String) -> Void) async throws {
        var replies: [String: StaticReplyServer.Reply] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder) {
            let path = URL(fileURLWithPath: folder).appendingPathComponent(name)
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path.path, isDirectory: &isFolder), !isFolder.boolValue else { continue }
            let type =
                name.hasSuffix(".json")
                ? "application/json" : name.hasSuffix(".js") ? "application/javascript; charset=utf-8" : "text/plain"
            replies["/" + name] = .init(contentType: type, body: Array(try Data(contentsOf: path)))
        }
        let server = try await StaticReplyServer.start(replies: replies)
        var socketTask: Task<Void, any Error>?
        if let unixSocket {
            try? FileManager.default.removeItem(atPath: unixSocket)
            let router = Router()
            StaticReplyServer.install(replies, on: router)
            let app = Application(
                router: router, configuration: .init(address: .unixDomainSocket(path: unixSocket), serverName: "waitingroom-emulator"),
                logger: EmulatorServer.quietLogger)
            // no signal handling of its own: SIGTERM (bench/wrk.sh's cleanup) must still end the
            // process as it does without the socket (a handler here swallowed it)
            socketTask = Task { try await app.runService(gracefulShutdownSignals: []) }
        }
        var fields: [String: JSONValue] = ["baseURL": .string(server.baseURL)]
        if let unixSocket { fields["unixSocket"] = .string(unixSocket) }
        announce(JSONValue.object(fields).jsonText)
        await server.wait()
        socketTask?.cancel()
    }

    static func stop(nginx: Process?, hello: BenchChildServer?, server: BenchChildServer) async {
        if let nginx, nginx.isRunning {
            nginx.terminate()
            await waitForExit(nginx)
        }
        await hello?.stop()
        await server.stop()
    }

    /// Runs `wrk` with `arguments`; its `Requests/sec`.
    static func requestsPerSecond(wrk: String, _ arguments: [String]) async throws -> Double {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: wrk)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // wrk prints a few hundred bytes (far below a pipe's buffer): wait for it, then read
        await waitForExit(process)
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let text = String(decoding: data, as: UTF8.self)
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("Requests/sec:") }),
            let value = Double(line.dropFirst("Requests/sec:".count).trimmingCharacters(in: .whitespaces))
        else {
            throw BenchFailure(description: "wrk \(arguments.joined(separator: " ")) printed no rate: \(text.suffix(300))")
        }
        return value
    }

    /// Waits for `process` to end without holding a thread of the cooperative pool.
    static func waitForExit(_ process: Process) async {
        while process.isRunning {
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// The executable `name` on `PATH` or in the sbin folders (Debian puts nginx in /usr/sbin).
    package static func tool(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let folders = path.split(separator: ":").map(String.init) + ["/usr/sbin", "/usr/local/sbin", "/sbin"]
        return folders.map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Whether something accepts connections on 127.0.0.1:`port` within 5 s.
    static func waitForPort(_ port: Int) async -> Bool {
        #if canImport(Glibc)
            for _ in 0..<100 {
                let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                guard fd >= 0 else { return false }
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_port = UInt16(port).bigEndian
                address.sin_addr.s_addr = inet_addr("127.0.0.1")
                let connected = withUnsafePointer(to: &address) { pointer in
                    pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                    }
                }
                close(fd)
                if connected { return true }
                try? await Task.sleep(for: .milliseconds(50))
            }
        #endif
        return false
    }
}
