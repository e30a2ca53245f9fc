import Logging
import NIOCore
import NIOHTTP1
import WaitingRoomGate

/// One visitor connection to `waitingroom gate`: the last handler of an HTTP/1.1 server pipeline.
/// Requests are answered one at a time and in order: parts of a pipelined request wait in a
/// bounded queue until the answer before them has ended (NIO's pipelining helper would stop
/// reading during every answer, two `epoll_ctl` calls per request).
///
/// Each request takes a slot (``GateProxySlots``; 503 over the bound), is turned into a
/// ``GateRequest`` and put to the vendor's engine after the ``GateLimits``. The engine's answer
/// (the queue redirect, the AJAX form, a refusal) is sent from here and the request never reaches
/// the upstream. A request let through is forwarded on a pooled keep-alive connection of the same
/// event loop (``GateUpstreamPool``), headers kept minus hop-by-hop ones, `X-Forwarded-For`,
/// `-Proto` and `-Host` added, and the upstream's answer is streamed back with the engine's pass
/// headers (the session cookie) added. An upstream that refuses, resets or does not answer within
/// the exchange timeout before its answer's head gives a 502 page; after the head, the visitor's
/// connection is closed (the answer cannot be finished). A request without a body and with an
/// idempotent method whose reused connection turns out closed is sent once more on a new one.
///
/// Back-pressure both ways: the visitor's request is read only while the upstream connection
/// takes writes, and the upstream's answer only while the visitor's connection does.
///
/// Threading: every method runs on the channel's event loop. An engine that cannot decide at once
/// (``GateEngine/immediateDecision(_:)`` is nil, e.g. CrowdHandler's API check) is asked in a task,
/// and its decision comes back to the loop; reads are held meanwhile. One event-loop timer per
/// connection watches both timeouts (``scheduleWatch(short:)``).
///
/// The class is split by role, in extensions in files of their own; this file holds its state
/// (every stored property) and its life (added, active, inactive, removed):
/// - GateProxyConnection+Visitor.swift: the visitor's side: reading requests, pipelining and
///   keep-alive, back-pressure, parse errors, and the gate's own answers;
/// - GateProxyConnection+Decision.swift: a new request's target, slot, limits and the engine's decision;
/// - GateProxyConnection+Upstream.swift: the upstream's side: connecting, forwarding the request,
///   relaying the answer, and an exchange that fails;
/// - GateProxyConnection+Timers.swift: the watch and its timeouts (exchange, body, idle).
final class GateProxyConnection: ChannelDuplexHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// Where the current request is.
    enum Phase {
        /// Between requests.
        case idle
        /// The gate answered itself (or the exchange ended) before the request's end: the rest of
        /// the request is read and dropped.
        case answered
        /// The engine reads the first bytes of the body before it decides (``GateEngine/bodyBytesToDecide``).
        case collecting
        /// The engine is deciding in a task.
        case deciding
        /// Waiting for an upstream connection.
        case connecting
        /// The upstream has the request; its answer streams back.
        case forwarding
        /// The gate answered before a long body's end and shut its side of the connection; what
        /// the visitor still sends is read and dropped until it closes (or a moment passes), so its
        /// stack does not reset the connection before it has read the answer.
        case lingering
        /// The visitor's connection is gone.
        case closed
    }

    let settings: GateProxySettings
    var context: ChannelHandlerContext?
    var phase = Phase.idle

    // The current request.
    var head: HTTPRequestHead?
    var keepAlive = true
    var requestEnded = false
    var requestHasBody = false
    var requestChunked = false
    /// The request's declared `Content-Length` (0 when none).
    var declaredLength = 0
    /// The most of a request's body the gate reads and drops after answering it itself, to keep
    /// the connection; a longer (or chunked) body ends the connection with the answer instead.
    static let drainedBodyBound = 65_536
    /// How long a connection shut after an early answer goes on dropping what the visitor sends.
    static let lingeringTimeout = TimeAmount.seconds(2)
    /// Request bytes (body and its framing) read before the upstream connection was ready.
    var pendingParts: [ByteBuffer] = []
    var holdsSlot = false
    var decision: GateDecision?
    /// The headers the decision adds to the app's answer (``GateAnswer/forward(adding:)``).
    var passHeaders: [GateHeader] = []
    /// Kept only when the engine wants to hear how the upstream answered.
    var gateRequest: GateRequest?
    var upstream: GateUpstreamConnection?
    var upstreamReused = false
    var retried = false
    /// Whether bytes of the answer's head have been written to the visitor (after that, a failed
    /// exchange can only end the connection, not become a 502).
    var responseStarted = false
    /// Whether the upstream's answer head has been read (then the request is never sent again).
    var answerHeadRead = false
    /// The answer's head, written with the first body bytes, the end, or at the end of the read
    /// it came in: a body that turns out malformed in the same read still gets the visitor a 502.
    var heldHead: ByteBuffer?
    /// Bytes after a whole request could not be parsed (a pipelined request, or anything after a
    /// request that ends the connection): the requests before them are answered, then a 400 ends it.
    var inputFailed = false
    /// How the forwarded answer's body is framed for the visitor.
    var visitorFraming = GateVisitorFraming.asReceived
    var forwardedAt = ContinuousClock.now
    /// When the exchange in hand times out (checked by the connection's watch, ``scheduleWatch(short:)``).
    var exchangeDeadline: NIODeadline?
    /// When the body of the request in hand must have arrived (slow uploads), while it is being read.
    var bodyDeadline: NIODeadline?
    /// The address this connection was counted under (``GateProxyClientBound``).
    private var countedPeer: String?
    /// While ``Phase/collecting``: the request, the body's first bytes so far, and how many are wanted.
    var collectingRequest: GateRequest?
    var collectedBody: [UInt8] = []
    var collectBound = 0
    var readWithheld = false
    /// Parts of pipelined requests read while an earlier answer was still going out.
    var queued = CircularBuffer<HTTPServerRequestPart>()
    var handlingQueued = false
    /// The most queued parts before reading stops.
    static let queuedPartsBound = 64
    /// The largest body part written in one buffer with its answer's head (copied after it)
    /// rather than as a second buffer.
    static let coalescedBodyBound = 16 * 1024

    /// Whether the visitor gets chunks the gate makes.
    var isChunkedForVisitor: Bool {
        if case .chunked = visitorFraming { return true }
        return false
    }
    /// When the connection last started or finished a request (for the idle timeout).
    var lastActivity = NIODeadline.now()
    var watch: Scheduled<Void>?
    /// Whether the watch runs at the exchange timeout's pace (an exchange is in hand) rather than
    /// the idle timeout's.
    var watchIsShort = false
    /// The peer's IP address, read once per connection.
    lazy var peer: String? = context?.channel.remoteAddress?.ipAddress

    init(settings: GateProxySettings) { self.settings = settings }

    /// Whether the visitor's connection takes writes now (the upstream connection reads only then).
    var isWritable: Bool { context?.channel.isWritable ?? false }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        scheduleWatch(short: false)
    }

    func channelActive(context: ChannelHandlerContext) {
        // one address holds at most so many connections (a trusted proxy speaks for many)
        if let peer, !settings.origin.trustedProxies.contains(peer) {
            if settings.clients.admit(peer) {
                countedPeer = peer
            } else {
                phase = .closed
                var bytes = context.channel.allocator.buffer(capacity: 160)
                bytes.writeStaticString(
                    "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: 1\r\nContent-Type: text/plain\r\nContent-Length: 39\r\n\r\ntoo many connections from your address\n"
                )
                let channel = context.channel
                context.writeAndFlush(wrapOutboundOut(bytes)).whenComplete { _ in channel.close(promise: nil) }
                return
            }
        }
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        watch?.cancel()
        watch = nil
        self.context = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let countedPeer {
            self.countedPeer = nil
            settings.clients.release(countedPeer)
        }
        phase = .closed
        cancelTimer()
        if let upstream {
            self.upstream = nil
            upstream.close()
        }
        pendingParts.removeAll()
        queued.removeAll()
        releaseSlot()
        context.fireChannelInactive()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { upstream?.resumeReading() }
        context.fireChannelWritabilityChanged()
    }

    // MARK: bookkeeping

    func releaseSlot() {
        guard holdsSlot else { return }
        holdsSlot = false
        settings.slots.give()
    }
}
