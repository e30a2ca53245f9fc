import Logging
import NIOCore

/// The timeouts of ``GateProxyConnection``: one event-loop timer per connection (its watch)
/// looks at the exchange deadline (an upstream that does not answer in time: 502, or the
/// connection closed after the answer's head), the body deadline (a slow upload: 408) and the
/// idle timeout between requests (the connection closed), at the idle pace, or a faster one
/// while an exchange or a body is in hand.
///
/// Threading: the watch is scheduled on the visitor channel's event loop and runs there, like
/// every other method of the connection, so it reads and changes the state without locks.
extension GateProxyConnection {
    /// How often a connection's watch looks at its timeouts: an eighth of the idle timeout, or
    /// while an exchange is in hand, of the shorter of the two, so either is kept within 12.5 %
    /// (a timer per request cost 2 % of the gate's time; an idle connection is looked at rarely).
    private func watchInterval(short: Bool) -> TimeAmount {
        let base =
            short
            ? min(settings.idleTimeout.nanoseconds, settings.exchangeTimeout.nanoseconds, settings.bodyTimeout.nanoseconds)
            : settings.idleTimeout.nanoseconds
        return .nanoseconds(max(base / 8, 1_000_000))
    }

    /// The connection's timeouts, looked at every ``watchInterval(short:)``: a connection that
    /// sits idle between requests for the idle timeout is closed (slow or abandoned clients), and
    /// an exchange past its deadline ends (a 502 before the answer's head, the connection closed
    /// after it).
    func scheduleWatch(short: Bool) {
        guard let context else { return }
        watchIsShort = short
        watch = context.eventLoop.assumeIsolated().scheduleTask(in: watchInterval(short: short)) { [self] in
            guard phase != .closed, let context = self.context else { return }
            let now = NIODeadline.now()
            if let deadline = exchangeDeadline, now >= deadline {
                exchangeDeadline = nil
                exchangeTimedOut()
            }
            if let deadline = bodyDeadline, now >= deadline {
                bodyDeadline = nil
                if !requestEnded { bodyTimedOut() }
            }
            if phase == .idle, queued.isEmpty, now - lastActivity >= settings.idleTimeout {
                context.close(promise: nil)
            } else if phase != .closed {
                scheduleWatch(short: exchangeDeadline != nil || bodyDeadline != nil)
            }
        }
    }

    func startTimer() {
        exchangeDeadline = .now() + settings.exchangeTimeout
        // a watch at the idle pace would look too late: at most once per watch period under load
        if !watchIsShort, settings.exchangeTimeout < settings.idleTimeout {
            watch?.cancel()
            scheduleWatch(short: true)
        }
    }

    func cancelTimer() {
        exchangeDeadline = nil
    }

    /// The request's body did not arrive within the body timeout: 408 when no answer has begun
    /// (the upstream, which has part of it, is let go), else the connection ends.
    private func bodyTimedOut() {
        settings.logger.notice("request body too slow", metadata: ["path": "\(head?.uri ?? "")", "peer": "\(peer ?? "")"])
        keepAlive = false
        switch phase {
        case .answered:
            abandon()
        case .collecting, .deciding, .connecting, .forwarding:
            collectingRequest = nil
            collectedBody = []
            if responseStarted || heldHead != nil {
                abandon()
                return
            }
            if let upstream {
                self.upstream = nil
                upstream.exchange = nil
                upstream.close()
            }
            cancelTimer()
            releaseSlot()
            phase = .answered
            answer(GateProxyErrorPage.bodyTooSlow())
        case .idle, .lingering, .closed:
            break
        }
    }

    /// The exchange in hand took longer than the exchange timeout.
    private func exchangeTimedOut() {
        switch phase {
        case .connecting:
            fail(problem: "it did not answer in time", error: nil)
        case .forwarding:
            if responseStarted { abandon() } else { fail(problem: "it did not answer in time", error: nil) }
        case .idle, .answered, .collecting, .deciding, .lingering, .closed:
            break
        }
    }
}
