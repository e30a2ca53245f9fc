import Foundation
import NIOCore
import NIOPosix

/// A tiny HTTP/1.1 server on 127.0.0.1, port 0, that misbehaves on purpose for transport tests.
///
/// Paths: `/ok` (200 "hello"), `/delay/MS` (200 after MS milliseconds), `/never` (never
/// answers), `/partial` (the head and 4 of 100 body bytes, then nothing), `/reset` (closes the connection without answering), `/garbage` (bytes that are not
/// HTTP), `/redirect` (302 to `/ok`), `/hops/N` (N redirects, then 200), `/to/STATUS/LOCATION` (that status, `Location` the
/// percent-decoded rest), `/echo` (the method and header lines received), `/big/N` (200 with N bytes).
///
/// ``activity`` records, on the server's event loop, when requests arrive and when clients
/// close their connections, so a test can see what the client did without needing a free
/// cooperative thread.
final class LoopbackHTTPServer: Sendable {
    let channel: any Channel
    let activity: LoopbackActivity
    var port: Int { channel.localAddress?.port ?? 0 }
    var base: String { "http://127.0.0.1:\(port)" }

    static func start() async throws -> LoopbackHTTPServer {
        let activity = LoopbackActivity()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(MisbehavingHandler(activity: activity))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        return LoopbackHTTPServer(channel: channel, activity: activity)
    }

    private init(channel: any Channel, activity: LoopbackActivity) {
        self.channel = channel
        self.activity = activity
    }

    func stop() async { try? await channel.close() }
}

/// One connection's handler, on its event loop only: it gathers bytes until a whole head
/// (`\r\n\r\n`), answers it, and skips the head's `Content-Length` of body (a head or body
/// split across reads, or a body read apart from its head, is one request, not several).
private final class MisbehavingHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let activity: LoopbackActivity
    private var pending: [UInt8] = []
    private var bodyLeft = 0

    init(activity: LoopbackActivity) { self.activity = activity }

    func channelInactive(context: ChannelHandlerContext) {
        activity.connectionClosed()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        pending += buffer.readableBytesView
        let separator: [UInt8] = [13, 10, 13, 10]
        while true {
            if bodyLeft > 0 {
                let skipped = min(bodyLeft, pending.count)
                pending.removeFirst(skipped)
                bodyLeft -= skipped
                if bodyLeft > 0 { return }
            }
            guard pending.count >= 4, let end = pending.indices.dropLast(3).first(where: { Array(pending[$0..<$0 + 4]) == separator })
            else { return }
            let head = String(decoding: pending[..<end], as: UTF8.self)
            pending.removeFirst(end + 4)
            for field in head.split(separator: "\r\n").dropFirst() where field.lowercased().hasPrefix("content-length:") {
                bodyLeft = Int(field.dropFirst(15).trimmingCharacters(in: .whitespaces)) ?? 0
            }
            answer(head, context: context)
        }
    }

    /// Answers the request whose head (without its blank line) is `text`.
    private func answer(_ text: String, context: ChannelHandlerContext) {
        guard let line = text.split(separator: "\r\n").first else { return }
        let parts = line.split(separator: " ")
        let path = parts.count > 1 ? String(parts[1]) : "/"
        let channel = context.channel
        activity.requestReceived(path: path)
        func reply(_ status: String, _ body: String, extra: String = "") {
            let head = "HTTP/1.1 \(status)\r\nContent-Length: \(body.utf8.count)\r\nContent-Type: text/plain\r\n\(extra)\r\n"
            channel.writeAndFlush(ByteBuffer(string: head + body), promise: nil)
        }
        if path == "/ok" {
            reply("200 OK", "hello")
        } else if path.hasPrefix("/delay/"), let ms = Int64(path.dropFirst(7)) {
            channel.eventLoop.scheduleTask(in: .milliseconds(ms)) {
                channel.writeAndFlush(ByteBuffer(string: "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nlate"), promise: nil)
            }
        } else if path == "/never" {
            return
        } else if path == "/partial" {
            channel.writeAndFlush(ByteBuffer(string: "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nfour"), promise: nil)
        } else if path == "/reset" {
            context.close(promise: nil)
        } else if path == "/garbage" {
            channel.writeAndFlush(ByteBuffer(string: "\u{1}\u{2}NOT HTTP AT ALL\r\n\r\n"), promise: nil)
            channel.eventLoop.scheduleTask(in: .milliseconds(20)) { channel.close(promise: nil) }
        } else if path == "/redirect" {
            reply("302 Found", "", extra: "Location: /ok\r\n")
        } else if path.hasPrefix("/hops/"), let n = Int(path.dropFirst(6)) {
            // N redirects in a row, then 200 "hello"
            if n > 0 { reply("302 Found", "", extra: "Location: /hops/\(n - 1)\r\n") } else { reply("200 OK", "hello") }
        } else if path.hasPrefix("/to/") {
            // /to/STATUS/LOCATION (percent-encoded): that status with that Location
            let rest = path.dropFirst(4).split(separator: "/", maxSplits: 1)
            let location = rest.count == 2 ? (String(rest[1]).removingPercentEncoding ?? "") : ""
            reply("\(rest.first ?? "302") Moved", "", extra: "Location: \(location)\r\n")
        } else if path == "/echo" {
            // the request's method and header lines, as received
            reply("200 OK", String(parts.first ?? "") + "\n" + text.split(separator: "\r\n").dropFirst().joined(separator: "\n"))
        } else if path.hasPrefix("/big/"), let n = Int(path.dropFirst(5)) {
            reply("200 OK", String(repeating: "x", count: n))
        } else {
            reply("404 Not Found", "nope")
        }
    }
}
