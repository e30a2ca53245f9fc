import NIOCore
import NIOHTTP1

/// One keep-alive connection from `waitingroom gate` to its upstream: the last handler of an
/// HTTP/1.1 client pipeline. While it carries an exchange it hands the upstream's answer to that
/// exchange's ``GateProxyConnection`` and writes the request to the upstream for it; between
/// exchanges it waits in its event loop's ``GateUpstreamPool``.
///
/// Threading: created, used and released on its channel's event loop only, which is also the
/// event loop of every visitor connection it serves (the pool is per event loop), so the two
/// handlers call each other directly, without locks or hops.
final class GateUpstreamConnection: ChannelDuplexHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    /// The visitor connection whose exchange this connection carries now; nil while pooled.
    var exchange: GateProxyConnection?
    /// The pool it goes back to, and leaves when it closes.
    let pool: GateUpstreamPool
    private var context: ChannelHandlerContext?
    /// A `read` withheld while the visitor's connection cannot take more bytes.
    private var readWithheld = false

    init(pool: GateUpstreamPool) { self.pool = pool }

    /// Whether the connection is open and can carry an exchange.
    var isActive: Bool { context?.channel.isActive ?? false }
    /// Whether writes to the upstream go out now (false: the kernel's buffer is full).
    var isWritable: Bool { context?.channel.isWritable ?? false }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    // MARK: the upstream's answer, to the exchange

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        exchange?.upstreamRead(unwrapInboundIn(data))
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        exchange?.upstreamReadComplete()
    }

    func channelInactive(context: ChannelHandlerContext) {
        pool.forget(self)
        let exchange = self.exchange
        self.exchange = nil
        exchange?.upstreamEnded(self, error: nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        let exchange = self.exchange
        self.exchange = nil
        exchange?.upstreamEnded(self, error: error)
        context.close(promise: nil)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { exchange?.upstreamBecameWritable() }
        context.fireChannelWritabilityChanged()
    }

    /// Reads only while the visitor's connection can take what is read (back-pressure).
    func read(context: ChannelHandlerContext) {
        if let exchange, !exchange.isWritable {
            readWithheld = true
        } else {
            context.read()
        }
    }

    /// Reads again after ``read(context:)`` withheld one.
    func resumeReading() {
        guard readWithheld, let context else { return }
        readWithheld = false
        context.read()
    }

    // MARK: the request, to the upstream

    /// Writes one part of the request (flushed by ``flush()``).
    func write(_ part: HTTPClientRequestPart) {
        context?.write(wrapOutboundOut(part), promise: nil)
    }

    func flush() { context?.flush() }

    /// Closes the connection (an exchange it cannot finish cleanly).
    func close() {
        exchange = nil
        context?.close(promise: nil)
    }
}
