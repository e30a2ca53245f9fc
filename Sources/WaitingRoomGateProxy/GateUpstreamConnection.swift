import NIOCore

/// One keep-alive connection from `waitingroom gate` to its upstream, and the only handler of its
/// pipeline: it writes the request bytes an exchange gives it, and reads the upstream's answers
/// with a ``GateResponseFramer`` (heads parsed, bodies passed on as they came). While it carries
/// an exchange it hands the answer's events to that exchange's ``GateProxyConnection``; between
/// exchanges it waits in its event loop's ``GateUpstreamPool``.
///
/// Threading: created, used and released on its channel's event loop only, which is also the
/// event loop of every visitor connection it serves (the pool is per event loop), so the two
/// handlers call each other directly, without locks or hops.
final class GateUpstreamConnection: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// The visitor connection whose exchange this connection carries now; nil while pooled.
    var exchange: GateProxyConnection?
    /// The pool it goes back to, and leaves when it closes.
    let pool: GateUpstreamPool
    private var context: ChannelHandlerContext?
    /// A `read` withheld while the visitor's connection cannot take more bytes.
    private var readWithheld = false
    private var framer = GateResponseFramer()

    init(pool: GateUpstreamPool) { self.pool = pool }

    /// Whether the connection is open and can carry an exchange.
    var isActive: Bool { context?.channel.isActive ?? false }
    /// Whether writes to the upstream go out now (false: the kernel's buffer is full).
    var isWritable: Bool { context?.channel.isWritable ?? false }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    // MARK: the upstream's answer, to the exchange

    /// Starts an exchange: the answer to come belongs to `exchange`. `requestIsHead`: the request
    /// is a HEAD (its answer has no body); `dechunk`: the visitor cannot read chunks (HTTP/1.0).
    func begin(_ exchange: GateProxyConnection, requestIsHead: Bool, dechunk: Bool) {
        self.exchange = exchange
        framer.start(requestIsHead: requestIsHead, dechunk: dechunk)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        do {
            // one event at a time: handling `.end` may give this connection to the next exchange
            while let exchange, let event = try framer.next(&buffer) {
                exchange.upstreamEvent(event)
                if case .end = event { break }
            }
        } catch {
            fail(error)
            return
        }
        // bytes for no exchange (an idle connection, or after an answer's end): it cannot be reused
        if buffer.readableBytes > 0, exchange == nil || !framer.isExpecting {
            if let exchange { exchange.upstreamEnded(self, error: nil) }
            pool.forget(self)
            context.close(promise: nil)
        }
    }

    /// An answer that is not valid HTTP: the exchange ends (502 or cut short) and so does the connection.
    private func fail(_ error: any Error) {
        let exchange = self.exchange
        self.exchange = nil
        pool.forget(self)
        exchange?.upstreamEnded(self, error: error)
        context?.close(promise: nil)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        exchange?.upstreamReadComplete()
    }

    func channelInactive(context: ChannelHandlerContext) {
        pool.forget(self)
        // the end of a body delimited by the connection's end
        if let exchange, let event = framer.inputEnded() {
            exchange.upstreamEvent(event)
        }
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

    /// Writes request bytes (flushed by ``flush()``).
    func write(_ bytes: ByteBuffer) {
        context?.write(wrapOutboundOut(bytes), promise: nil)
    }

    func flush() { context?.flush() }

    /// Closes the connection (an exchange it cannot finish cleanly).
    func close() {
        exchange = nil
        context?.close(promise: nil)
    }
}
