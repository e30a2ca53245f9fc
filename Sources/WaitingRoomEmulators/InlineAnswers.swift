import Foundation
import HTTPTypes
import NIOCore
import NIOHTTPTypes
import Synchronization
import WaitingRoom
import WaitingRoomEmulatorKit

/// Decides, on the event loop, whether a request is answered inline: `nil` hands it to the
/// router (the request reaches the route unchanged). Must not block or wait.
package typealias InlineAnswerer = @Sendable (_ head: HTTPTypes.HTTPRequest, _ body: ByteBuffer?) -> EmulatorInlineReply?

/// A channel handler in front of Hummingbird's request handling that answers the emulators'
/// hot, synchronous requests (a NetFUNNEL `/ts.wseq` call, a Queue-it enqueue) on the
/// connection's event loop, and passes every other request on to the router untouched.
///
/// Why: a request the router serves crosses from the event loop into a Swift task and back
/// (Hummingbird's async channel); under `wrk` that bridge, not the emulator, is most of a
/// request's cost. The answers are the routes' own (the same functions compute both), so a
/// client cannot tell which path served it; anything the inline path cannot do synchronously
/// (injected faults, which may delay, drop or garble) goes to the router.
///
/// Order on one connection is kept: while a request handed to the router has not been answered
/// (its response's `.end` has not passed this handler), later requests go to the router too.
/// Threading: a NIO channel handler lives on its channel's event loop; all its state is touched
/// only there (NIO's rule), and `answer` is `@Sendable` and synchronous.
final class InlineAnswerHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// Bodies larger than this are never collected here: the request goes to the router.
    static let bodyLimit = 16 * 1024

    private enum State {
        /// Between requests.
        case idle
        /// Collecting a request that may be answered inline.
        case collecting(HTTPTypes.HTTPRequest, ByteBuffer?)
        /// Passing the current request's parts on to the router.
        case forwarding
    }

    private let answer: InlineAnswerer
    private let serverName: String
    private var state = State.idle
    /// Requests handed to the router whose response has not ended yet.
    private var routed = 0
    private var wroteInline = false
    private var date = HTTPDate()

    private let count: InlineAnswerCount

    init(serverName: String, answer: @escaping InlineAnswerer, count: InlineAnswerCount) {
        self.serverName = serverName
        self.answer = answer
        self.count = count
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        switch (state, part) {
        case (.idle, .head(let head)):
            if routed == 0, Self.mayAnswer(head) {
                state = .collecting(head, nil)
            } else {
                route(context: context, data)
            }
        case (.collecting(let head, let body), .body(var chunk)):
            if var collected = body {
                collected.writeBuffer(&chunk)
                state = .collecting(head, collected)
            } else {
                state = .collecting(head, chunk)
            }
            if case .collecting(_, let collected?) = state, collected.readableBytes > Self.bodyLimit {
                // too large to hold here: the router takes it from the start
                route(context: context, wrapInboundOut(.head(head)))
                context.fireChannelRead(wrapInboundOut(.body(collected)))
            }
        case (.collecting(let head, let body), .end(let trailers)):
            state = .idle
            if let reply = answer(head, body) {
                count.increment()
                write(reply, context: context)
            } else {
                route(context: context, wrapInboundOut(.head(head)))
                if let body { context.fireChannelRead(wrapInboundOut(.body(body))) }
                context.fireChannelRead(wrapInboundOut(.end(trailers)))
                state = .idle
            }
        case (.forwarding, .end):
            state = .idle
            context.fireChannelRead(data)
        case (.forwarding, _):
            context.fireChannelRead(data)
        default:
            // parts out of order (the codec never sends them): leave them to the router
            context.fireChannelRead(data)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if wroteInline {
            wroteInline = false
            context.flush()
        }
        context.fireChannelReadComplete()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data), routed > 0 { routed -= 1 }
        context.write(data, promise: promise)
    }

    /// Hands the request whose head is `head` to the router.
    private func route(context: ChannelHandlerContext, _ head: NIOAny) {
        routed += 1
        state = .forwarding
        context.fireChannelRead(head)
    }

    private func write(_ reply: EmulatorInlineReply, context: ChannelHandlerContext) {
        var fields = HTTPFields()
        fields[.contentType] = reply.contentType
        for header in reply.headers {
            if let name = HTTPField.Name(header.name) { fields.append(HTTPField(name: name, value: header.value)) }
        }
        fields[.contentLength] = String(reply.body.count)
        fields[.date] = date.now()
        fields[.server] = serverName
        let response = HTTPResponse(status: .init(code: reply.status), headerFields: fields)
        context.write(wrapOutboundOut(.head(response)), promise: nil)
        if !reply.body.isEmpty {
            context.write(wrapOutboundOut(.body(context.channel.allocator.buffer(bytes: reply.body))), promise: nil)
        }
        context.write(wrapOutboundOut(.end(nil)), promise: nil)
        wroteInline = true
    }

    /// Requests that ask to close the connection or to continue are left to the router (it
    /// knows how to end a connection and to answer `Expect`).
    private static func mayAnswer(_ head: HTTPTypes.HTTPRequest) -> Bool {
        if let connection = head.headerFields[.connection], connection.lowercased().contains("close") { return false }
        if head.headerFields[.expect] != nil { return false }
        // a declared body too large to hold here goes to the router at once (which refuses it),
        // not after waiting for bytes the client may never send
        if let length = head.headerFields[.contentLength], Int(length).map({ $0 > bodyLimit }) ?? true { return false }
        return true
    }
}

/// How many requests a server answered inline (shared by its connections' handlers).
final class InlineAnswerCount: Sendable {
    private let count = Atomic<Int>(0)

    func increment() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}

/// The `Date` header's text (IMF-fixdate, RFC 9110 §5.6.7), formatted once per second.
struct HTTPDate {
    private var second: Int = -1
    private var text = ""

    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    mutating func now() -> String {
        var seconds = time(nil)
        if seconds != second {
            second = seconds
            var parts = tm()
            gmtime_r(&seconds, &parts)
            text = Self.format(parts)
        }
        return text
    }

    static func format(_ t: tm) -> String {
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let day = days[Int(t.tm_wday) % 7]
        let month = months[Int(t.tm_mon) % 12]
        return "\(day), \(two(t.tm_mday)) \(month) \(t.tm_year + 1900) \(two(t.tm_hour)):\(two(t.tm_min)):\(two(t.tm_sec)) GMT"
    }
}
