import Foundation
import Logging
import Synchronization
import WaitingRoom

/// One NetFUNNEL wait: 5101, then 5002 every `ttl` (clamped 1–30 s, 0 ⇒ 1) until an outcome;
/// for section control, 5003 alive notices on the server's cycle after entry until
/// ``complete(_:context:)`` sends 5004.
final class NetFUNNELSessionEngine: WaitingSessionEngine {
    var vendorID: String { NetFUNNELConfiguration.vendorID }
    let client: NetFUNNELClient
    private let held = Mutex<Held>(Held())

    struct Held {
        var key: String?
        var node: NetFUNNELNode?
        var alive: Task<Void, Never>?
    }

    /// An error found before any request (a bad room); the wait reports it (or, with
    /// `errorBypass`, passes with 300). Boxed: one engine per waiting user, and the error is rare.
    private let setup: Setup

    private enum Setup {
        case ready
        indirect case failed(WaitingRoomError)
    }

    init(client: NetFUNNELClient, setupError: WaitingRoomError? = nil) {
        self.client = client
        self.setup = setupError.map { .failed($0) } ?? .ready
    }

    var configuration: NetFUNNELConfiguration { client.configuration }

    var cancelledStatus: VendorStatus {
        VendorStatus(
            vendor: vendorID, code: NetFUNNELStatusCode.waitingRoomClosed.rawValue,
            message: NetFUNNELStatusCode.waitingRoomClosed.message)
    }

    func status(_ code: Int, _ message: String? = nil) -> VendorStatus {
        VendorStatus(vendor: vendorID, code: code, message: message ?? NetFUNNELStatusCode.message(for: code))
    }

    /// Memory: this frame lives as long as the user waits (thousands at once under `load`), and
    /// a task keeps the memory of its deepest frames until it ends. So the frame holds only the
    /// wait's small state (``Run``; large, rare values are boxed): the request is awaited in
    /// ``request(_:context:)``, its answer is taken in by ``next(after:entry:progress:context:)``
    /// (synchronous), and every way out (cancel, failure, key return, the pass) goes through one
    /// call of ``end(_:context:)``.
    func wait(for entry: Entry, context: SessionContext) async -> Outcome {
        let run = Run(firstStep(entry))
        while true {
            switch run.step {
            case .end:
                return await end(run, context: context)
            case .sleep(let seconds):
                if await !pause(seconds: seconds) {
                    run.cancelled()
                    continue
                }
            case .again:
                break
            }
            await request(run, context: context)
        }
    }

    /// One wait's state, owned by the task that runs ``wait(for:context:)`` (never shared).
    final class Run {
        var progress = Progress()
        var step: Step
        init(_ step: Step) { self.step = step }

        /// Cancelled between requests: the key held goes back.
        @inline(never)
        func cancelled() { step = .end(.cancelled(key: progress.key, node: progress.node)) }
    }

    /// What one wait has learnt so far (kept small: it lives as long as the user waits).
    struct Progress {
        var tracker = NetFUNNELProgressTracker()
        var key: String?
        var node: NetFUNNELNode?
        var sleptTTL = 0
        var waitingStarted = false
        var reissues = 0
        var pageOpened = false
        /// Failed requests in a row that recovery mode waited through (the `reconnecting` attempt).
        var outages = 0

        /// The next request: 5101 until a key is held, then 5002.
        var opcode: NetFUNNELOpcode { key == nil ? .issueAndEnter : .checkEnter }
    }

    /// What the wait does next.
    enum Step {
        /// Sends the next request at once.
        case again
        /// Sleeps this many seconds, then sends the next request.
        case sleep(Int)
        /// The wait is over. Boxed (`indirect`): the ending's payload is large and rare, and the
        /// wait frame holds a step for as long as the user waits.
        indirect case end(Ending)
    }

    /// How a wait ends: decided without awaiting, carried out by ``end(_:context:)``.
    enum Ending {
        case outcome(Outcome)
        /// Cancelled: the key still held (if any) goes back, then 499.
        case cancelled(key: String?, node: NetFUNNELNode?)
        /// A failure: the key still held (if any) goes back, then the failure (or `errorBypass`).
        case failed(WaitingRoomError, key: String?, node: NetFUNNELNode?)
        /// 300/303 on 5002 (deactivated, white list): the waiting key goes back, then the pass,
        /// which holds no key.
        case giveBackThenPass(key: String, node: NetFUNNELNode?, reply: NetFUNNELReply)
        /// 301/302 (block, black list) while waiting: the waiting key goes back first.
        case giveBackThenBlock(key: String, node: NetFUNNELNode?, status: VendorStatus)
    }

    /// What one request brought back.
    enum Answer {
        case reply(NetFUNNELReply)
        case failure(WaitingRoomError)
        /// The wait was cancelled while the request was out; `reply` is its answer, if one came.
        case cancelled(after: NetFUNNELReply?)
    }

    /// A bad room fails before any request; bypass mode passes at once; else the first request.
    @inline(never)
    private func firstStep(_ entry: Entry) -> Step {
        if case .failed(let setupError) = setup { return .end(.failed(setupError, key: nil, node: nil)) }
        if configuration.isBypassMode { return .end(.outcome(bypassed(entry))) }
        return .again
    }

    /// Sends the next request and takes in its answer (``Run/step``). The request runs to
    /// completion in a task of its own even when the wait is cancelled meanwhile, so a key the
    /// server hands out in its reply is known and can be returned.
    @inline(never)
    private func request(_ run: Run, context: SessionContext) async {
        let inFlight = startRequest(run, context: context)
        let result = await inFlight.result
        take(result, run: run, context: context)
    }

    /// A durable store: a key the reply hands out (a new one: 5101's, or a re-issued one) goes
    /// into the journal before the wait goes on or the pass reaches the app.
    ///
    /// Called in the request's own task, not the session's: a task keeps the memory its deepest
    /// frames once needed for as long as it lives, and the store's frames (its database
    /// driver's) would otherwise stay with every waiting user (about 1.8 KB a user with SQLite,
    /// `waitingroom bench state`); the request's task ends with the request.
    @inline(never)
    private static func journalNewKey(_ reply: NetFUNNELReply, progress: Progress, entry: Entry, client: NetFUNNELClient) async {
        guard let key = reply.key, !key.isEmpty, key != progress.key else { return }
        let disposition = NetFUNNELStatusCode.disposition(of: reply.code)
        guard disposition == .wait || reply.code == NetFUNNELStatusCode.success.rawValue else { return }
        await client.journal(key, node: client.allowedNode(from: reply) ?? progress.node, entry: entry)
        // A re-issued key supersedes the one on record: the server no longer knows the old one.
        if let superseded = progress.key, !superseded.isEmpty {
            await client.environment.keyJournal.released(vendor: NetFUNNELClient.vendor, key: superseded)
        }
    }

    /// Starts the next request (5101 until a key is held, then 5002) in a task of its own.
    @inline(never)
    private func startRequest(_ run: Run, context: SessionContext) -> Task<NetFUNNELReply, any Error> {
        let client = self.client
        let progress = run.progress
        let exchange = client.exchange(
            progress.opcode, key: progress.key, ttl: progress.sleptTTL, entry: context.entry, node: progress.node, retries: true)
        // "Before waiting, configuration is initialized": the first request of a wait waits for
        // the settings fetch started at initialisation (bounded by networkTimeout; a failed fetch
        // does not stop the wait).
        let first = progress.opcode == .issueAndEnter
        let journaling = client.environment.keyJournal.isActive
        let entry = context.entry
        return Task {
            if first { await client.settings.ready() }
            let reply = try await client.send(exchange.reporting(to: context))
            if journaling { await Self.journalNewKey(reply, progress: progress, entry: entry, client: client) }
            return reply
        }
    }

    /// Takes in what a request brought back (cancelled meanwhile, failed or answered).
    @inline(never)
    private func take(_ result: Result<NetFUNNELReply, any Error>, run: Run, context: SessionContext) {
        let answer: Answer
        switch result {
        case .success(let reply):
            answer = Task.isCancelled ? .cancelled(after: reply) : .reply(reply)
        case .failure(let error as WaitingRoomError):
            answer = Task.isCancelled ? .cancelled(after: nil) : .failure(error)
        case .failure:
            answer = .cancelled(after: nil)
        }
        run.step = next(after: answer, entry: context.entry, progress: &run.progress, context: context)
    }

    /// Takes in what a request brought back and decides the next step.
    @inline(never)
    private func next(after answer: Answer, entry: Entry, progress: inout Progress, context: SessionContext) -> Step {
        let opcode = progress.opcode
        switch answer {
        case .cancelled(let reply):
            guard let reply else { return .end(.cancelled(key: progress.key, node: progress.node)) }
            let (key, node) = keyHeld(after: reply, progress: progress)
            return .end(.cancelled(key: key, node: node))
        case .failure(let error):
            if keepsWaiting(after: error, opcode: opcode, progress: progress) {
                progress.outages += 1
                let pause = max(1, progress.sleptTTL)
                let offline =
                    error.vendorCode == NetFUNNELStatusCode.networkNotConnected.rawValue
                    && client.environment.connectivity.isOffline(host: client.serverURL.host)
                context.emit(
                    .connection(
                        offline ? .offline : .reconnecting(attempt: progress.outages, nextRetryIn: .seconds(pause)),
                        status(error.vendorCode ?? NetFUNNELStatusCode.networkTimeout.rawValue, error.message)))
                return .sleep(pause)
            }
            return .end(.failed(error, key: progress.key, node: progress.node))
        case .reply(let reply):
            progress.outages = 0
            return step(after: reply, opcode: opcode, entry: entry, progress: &progress, context: context)
        }
    }

    /// Carries out the end of a wait: the key returns it needs, then the outcome.
    @inline(never)
    private func end(_ run: Run, context: SessionContext) async -> Outcome {
        // The ending is read here, not bound in `wait`: binding it there put a copy of its
        // payload in the wait frame (176 → 528 B, for as long as the user waits).
        guard case .end(let ending) = run.step else { return .closed(cancelledStatus) }
        switch ending {
        case .outcome(let outcome):
            return outcome
        case .cancelled(let key, let node):
            return await closeOnCancel(key: key, node: node, context: context)
        case .failed(let error, let key, let node):
            return await fail(error, key: key, node: node, context: context)
        case .giveBackThenPass(let key, let node, let reply):
            _ = await giveBack(key, node: node, context: context, retries: false)
            return passed(entry: context.entry, reply: reply, key: nil, node: node)
        case .giveBackThenBlock(let key, let node, let status):
            _ = await giveBack(key, node: node, context: context, retries: false)
            return .blocked(status)
        }
    }

    /// Takes in one reply (key, node, progress) and decides the next step. Synchronous and not
    /// inlined: its temporaries stay on the thread's stack, out of the long-lived wait frame.
    @inline(never)
    private func step(
        after reply: NetFUNNELReply, opcode: NetFUNNELOpcode, entry: Entry, progress: inout Progress, context: SessionContext
    ) -> Step {
        if let newest = reply.key, !newest.isEmpty { progress.key = newest }
        if let next = client.allowedNode(from: reply) { progress.node = next }
        let code = reply.code
        switch NetFUNNELStatusCode.disposition(of: code) {
        case .pass:
            if code != NetFUNNELStatusCode.success.rawValue, progress.waitingStarted, let waitingKey = progress.key, !waitingKey.isEmpty {
                progress.key = nil
                return .end(.giveBackThenPass(key: waitingKey, node: progress.node, reply: reply))
            }
            return .end(.outcome(passed(entry: entry, reply: reply, key: progress.key, node: progress.node)))
        case .wait:
            progress.waitingStarted = true
            announceWaiting(reply, tracker: &progress.tracker, pageOpened: &progress.pageOpened, context: context)
            progress.sleptTTL = client.pollSeconds(reply)
            return .sleep(progress.sleptTTL)
        case .block:
            if let waitingKey = progress.key, !waitingKey.isEmpty, progress.waitingStarted {
                return .end(.giveBackThenBlock(key: waitingKey, node: progress.node, status: status(code, reply.message)))
            }
            return .end(.outcome(.blocked(status(code, reply.message))))
        case .serverError, .close, .networkError:
            let keyGone = code == NetFUNNELStatusCode.noKey.rawValue || code == NetFUNNELStatusCode.invalidKey.rawValue
            if configuration.useNetworkRecoveryMode, progress.waitingStarted, keyGone,
                progress.reissues < configuration.recoveryReissueLimit
            {
                progress.reissues += 1
                progress.key = nil
                progress.node = nil
                progress.sleptTTL = 0
                progress.tracker.reset()
                client.logger.debug("recovery mode: the server no longer knows the key, re-issuing 5101")
                context.emit(.sessionRestarted(status(code, reply.message)))
                return .again
            }
            let error = NetFUNNELClient.serverError(code: code, message: reply.message, opcode: opcode.rawValue)
            return .end(.failed(error, key: keyGone ? nil : progress.key, node: progress.node))
        }
    }

    /// Recovery mode: a network failure while waiting keeps the key and tries again later.
    @inline(never)
    private func keepsWaiting(after error: WaitingRoomError, opcode: NetFUNNELOpcode, progress: Progress) -> Bool {
        guard configuration.useNetworkRecoveryMode, progress.waitingStarted, opcode == .checkEnter,
            NetFUNNELClient.isNetworkFailure(error)
        else { return false }
        client.logger.debug("recovery mode: network failure while waiting, keeping the key", metadata: ["error": "\(error.message)"])
        return true
    }

    /// The key (and node) a cancelled wait still holds after `reply`.
    @inline(never)
    private func keyHeld(after reply: NetFUNNELReply, progress: Progress) -> (String?, NetFUNNELNode?) {
        let newest = reply.key.flatMap { $0.isEmpty ? nil : $0 } ?? progress.key
        let held = NetFUNNELStatusCode.disposition(of: reply.code) == .wait || reply.code == NetFUNNELStatusCode.success.rawValue
        return (held ? newest : nil, client.allowedNode(from: reply) ?? progress.node)
    }

    /// Bypass mode (no client id): a keyless pass with 300.
    @inline(never)
    private func bypassed(_ entry: Entry) -> Outcome {
        .passed(
            NetFUNNELProvider.keylessPass(entry, reason: "bypassMode", clock: client.environment.clock),
            status(NetFUNNELStatusCode.bypass.rawValue, "Bypass (no clientId: bypass mode)"))
    }

    /// A pass (200, or 300/303): the pass, the key kept for ``complete(_:context:)``, and for
    /// section control the alive notices.
    @inline(never)
    private func passed(entry: Entry, reply: NetFUNNELReply, key: String?, node: NetFUNNELNode?) -> Outcome {
        let code = reply.code
        let pass = NetFUNNELProvider.pass(for: entry, code: code, key: key ?? "", node: node, clock: client.environment.clock)
        held.withLock {
            $0.key = pass.requiresCompletion ? key : nil
            $0.node = node
        }
        if entry.control == .section, pass.requiresCompletion {
            startAliveNotices(entry: entry, firstTTL: client.pollSeconds(reply))
        }
        return .passed(pass, status(code, reply.message ?? NetFUNNELStatusCode.message(for: code)))
    }

    /// A 201: the queue page (once, with the NetFUNNEL template) and the progress event.
    @inline(never)
    private func announceWaiting(
        _ reply: NetFUNNELReply, tracker: inout NetFUNNELProgressTracker, pageOpened: inout Bool, context: SessionContext
    ) {
        // nfContinue is documented with 201 only: the classic server's 202 (debug mode) is
        // folded into it; the server's message is kept.
        let replyStatus = status(NetFUNNELStatusCode.continue.rawValue, reply.message ?? NetFUNNELStatusCode.continue.message)
        let info = tracker.update(nwait: reply.nwait, nnext: reply.nnext, tps: reply.tps)
        if configuration.useNetfunnelTemplate, !pageOpened {
            pageOpened = true
            let page = client.waitingRoomPage(reply)
            context.emit(.queueOpened(QueuePage(queueURL: page), replyStatus))
        }
        context.emit(
            .progress(
                QueueProgress(
                    ahead: info.aheadWait, behind: info.behindWait, eta: .seconds(info.etaSeconds),
                    etaText: info.waitTime, percent: Double(info.progressRate)),
                replyStatus))
    }

    /// Sleeps on the environment's clock; false when the wait was cancelled.
    @inline(never)
    private func pause(seconds: Int) async -> Bool {
        do {
            try await client.environment.clock.sleep(for: .seconds(seconds))
            return true
        } catch {
            return false
        }
    }

    /// Cancelled: return the key (in a task that is not cancelled) and report 499.
    @inline(never)
    private func closeOnCancel(key: String?, node: NetFUNNELNode?, context: SessionContext) async -> Outcome {
        if let key, !key.isEmpty {
            _ = await giveBack(key, node: node, context: context, retries: false)
        }
        return .closed(cancelledStatus)
    }

    /// A failure: give back any key (one attempt), then fail or, with `errorBypass`, pass (300).
    @inline(never)
    private func fail(_ error: WaitingRoomError, key: String?, node: NetFUNNELNode?, context: SessionContext) async -> Outcome {
        let entry = context.entry
        let error = client.withErrorURL(error)
        if let key, !key.isEmpty {
            _ = await giveBack(key, node: node, context: context, retries: false)
        }
        guard configuration.errorBypass else { return .failed(error) }
        var pass = NetFUNNELProvider.keylessPass(entry, reason: "errorBypass", clock: client.environment.clock)
        pass.bypassedError = error
        return .passed(pass, status(NetFUNNELStatusCode.bypass.rawValue, "Bypass (errorBypass): \(error.vendorCode ?? 0) \(error.message)"))
    }

    /// 5003 every `ttl` of the last reply until cancelled by ``complete(_:context:)``.
    @inline(never)
    private func startAliveNotices(entry: Entry, firstTTL: Int) {
        let client = self.client
        let engine = self
        let task = Task {
            var ttl = firstTTL
            while !Task.isCancelled {
                do { try await client.environment.clock.sleep(for: .seconds(ttl)) } catch { return }
                let (key, node) = engine.held.withLock { ($0.key, $0.node) }
                guard let key, !key.isEmpty else { return }
                do {
                    let reply = try await client.send(.aliveNotice, key: key, entry: entry, node: node)
                    if let newest = reply.key, !newest.isEmpty { engine.held.withLock { $0.key = newest } }
                    if let next = client.allowedNode(from: reply) { engine.held.withLock { $0.node = next } }
                    switch NetFUNNELStatusCode.disposition(of: reply.code) {
                    case .wait:
                        ttl = client.pollSeconds(reply)
                    case .pass:
                        return
                    default:
                        client.logger.warning(
                            "alive notice refused; the section slot is lost",
                            metadata: ["code": "\(reply.code)", "message": "\(reply.message ?? "")"])
                        return
                    }
                } catch is CancellationError {
                    return
                } catch {
                    client.logger.debug("alive notice failed; trying again next cycle", metadata: ["error": "\(error)"])
                }
            }
        }
        held.withLock { $0.alive = task }
    }

    func complete(_ pass: Pass, context: SessionContext) async -> VendorStatus {
        let (alive, key, node) = held.withLock { held -> (Task<Void, Never>?, String?, NetFUNNELNode?) in
            let result = (held.alive, held.key, held.node)
            held.alive = nil
            held.key = nil
            return result
        }
        alive?.cancel()
        await alive?.value
        let credential = key ?? pass.credential
        guard pass.requiresCompletion, !credential.isEmpty else {
            return status(200, "Success (no key to return)")
        }
        let fallback = NetFUNNELProvider.node(of: pass).flatMap { client.isAllowedHost($0.host) ? $0 : nil }
        return await giveBack(credential, node: node ?? fallback, context: context, retries: true)
    }

    /// Returns `key` (5004, with the agent's retries when `retries`) in a task that is not
    /// cancelled with the caller. When that fails for want of an answer, the key is handed to
    /// the background (``NetFUNNELConfiguration/backgroundReturnSeconds``, a proposal) and the
    /// failure is reported as the agent documents it (500).
    @inline(never)
    private func giveBack(_ key: String, node: NetFUNNELNode?, context: SessionContext, retries: Bool) async -> VendorStatus {
        let client = self.client
        let entry = context.entry
        let result = await Task { await client.returnAttempt(key, node: node, entry: entry, retries: retries) }.value
        switch result {
        case .returned(let status), .alreadyReturned(let status), .refused(let status):
            return status
        case .failed(let status), .cancelled(let status):
            let schedule = configuration.backgroundReturnSchedule(keyTimeout: client.keyTimeout(for: entry))
            guard !schedule.delays.isEmpty else { return status }
            client.logger.info(
                "key return failed; returning it in the background",
                metadata: [
                    "key": "\(client.environment.redact(key))", "budget": "\(configuration.backgroundReturnSeconds) s",
                    "reason": "\(status.message)"
                ])
            context.returnInBackground(schedule: schedule, attempt: client.backgroundReturn(key, node: node, entry: entry))
            return status
        }
    }
}
