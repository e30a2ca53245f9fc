import NIOCore
import NIOPosix

/// The idle keep-alive connections to the upstream on one event loop: an exchange takes one (or
/// opens one), and gives it back when the upstream's answer has ended with the connection still
/// good. Connections never move between event loops, so taking and giving need no lock.
///
/// Threading: every method runs on ``eventLoop`` (``GateUpstreamPools`` hands a pool out only there).
final class GateUpstreamPool {
    let eventLoop: any EventLoop
    let address: GateUpstreamAddress
    let connectTimeout: TimeAmount
    /// The most idle connections kept; more are closed when given back.
    let maxIdle: Int
    private var idle: [GateUpstreamConnection] = []

    init(eventLoop: any EventLoop, address: GateUpstreamAddress, connectTimeout: TimeAmount, maxIdle: Int) {
        self.eventLoop = eventLoop
        self.address = address
        self.connectTimeout = connectTimeout
        self.maxIdle = maxIdle
    }

    /// An idle connection that is still open, or nil.
    func take() -> GateUpstreamConnection? {
        while let connection = idle.popLast() {
            if connection.isActive { return connection }
        }
        return nil
    }

    /// Keeps `connection` for the next exchange, or closes it when the pool is full or it is closed.
    func give(_ connection: GateUpstreamConnection) {
        connection.exchange = nil
        guard connection.isActive, idle.count < maxIdle else {
            connection.close()
            return
        }
        idle.append(connection)
    }

    /// Drops `connection` (it closed).
    func forget(_ connection: GateUpstreamConnection) {
        idle.removeAll { $0 === connection }
    }

    /// Closes every idle connection (shutdown).
    func closeAll() {
        let all = idle
        idle.removeAll()
        for connection in all { connection.close() }
    }

    /// Opens a new connection on this event loop, its pipeline a ``GateUpstreamConnection``
    /// alone (it reads and writes HTTP/1.1 bytes itself; ``connection(of:)`` finds it).
    func connect() -> EventLoopFuture<any Channel> {
        let pool = NIOLoopBound(self, eventLoop: eventLoop)
        var bootstrap = ClientBootstrap(group: eventLoop).connectTimeout(connectTimeout)
        if case .tcp = address { bootstrap = bootstrap.channelOption(.socketOption(.tcp_nodelay), value: 1) }
        bootstrap = bootstrap.channelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(GateUpstreamConnection(pool: pool.value))
            }
        }
        switch address {
        case .tcp(let host, let port): return bootstrap.connect(host: host, port: port)
        case .unixSocket(let path): return bootstrap.connect(unixDomainSocketPath: path)
        }
    }

    /// The ``GateUpstreamConnection`` of a channel ``connect()`` opened; call on its event loop.
    func connection(of channel: any Channel) throws -> GateUpstreamConnection {
        try channel.pipeline.syncOperations.handler(type: GateUpstreamConnection.self)
    }
}

/// One ``GateUpstreamPool`` per event loop of the gate's group, made up front so that a lookup
/// needs no lock: a visitor connection finds its own loop's pool.
final class GateUpstreamPools: Sendable {
    private let pools: [ObjectIdentifier: NIOLoopBoundBox<GateUpstreamPool>]

    init(group: any EventLoopGroup, address: GateUpstreamAddress, connectTimeout: TimeAmount, maxIdlePerLoop: Int) {
        var pools: [ObjectIdentifier: NIOLoopBoundBox<GateUpstreamPool>] = [:]
        for loop in group.makeIterator() {
            let pool = GateUpstreamPool(eventLoop: loop, address: address, connectTimeout: connectTimeout, maxIdle: maxIdlePerLoop)
            pools[ObjectIdentifier(loop)] = NIOLoopBoundBox.makeBoxSendingValue(pool, eventLoop: loop)
        }
        self.pools = pools
    }

    /// The pool of `loop`; call on `loop`. Nil for a loop outside the group.
    func pool(on loop: any EventLoop) -> GateUpstreamPool? {
        pools[ObjectIdentifier(loop)]?.value
    }

    /// Closes every pool's idle connections, each on its own loop.
    func closeAll() {
        for (_, box) in pools {
            box.eventLoop.execute { box.value.closeAll() }
        }
    }
}
