import Foundation
import NIOConcurrencyHelpers
import WaitingRoom

/// The Cloudflare Waiting Room backend, in JSON mode: each check requests the protected URL with
/// `Accept: application/json` and the visitor's `__cfwaitingroom` cookie; a `cfWaitingRoom` reply
/// means waiting (refresh after `refreshIntervalSeconds`), the origin's own response means the
/// request went through (the pass carries that response and the cookie). `queueIsFull` (code 5)
/// and a rejecting room (`isRejectQueue`, code 4) block; an event's pre-queue is waited through
/// under code 8 with its countdown as the progress's eta; a suspended room (the origin answers
/// and no cookie is set) is `disabled`; failures are retried by
/// ``CloudflareConfiguration/retryPolicy`` and then fail, or pass with code 10 under
/// ``CloudflareConfiguration/failOpen``.
/// Cloudflare publishes no client SDK, so there is no compatibility facade.
public final class CloudflareProvider: WaitingRoomProvider {
    public let vendorID = CloudflareConfiguration.vendorID
    package let configuration: CloudflareConfiguration
    package let environment: ProviderEnvironment
    package let client: CloudflareClient
    /// The stored passes (kept for the room's session duration).
    let passes: PassKeeper
    let dedup = SessionDeduplicator()
    /// Cookie jars kept between checks, per room and user (what a browser keeps). Behind NIO's
    /// lock, which ThreadSanitizer sees (it cannot see `Synchronization.Mutex` on Linux).
    let jars = NIOLockedValueBox<[String: CloudflareCookieJar]>([:])

    package init(configuration: CloudflareConfiguration, environment: ProviderEnvironment) {
        self.configuration = configuration
        self.environment = environment
        self.client = CloudflareClient(configuration: configuration, transport: environment.transport)
        self.passes = PassKeeper(
            vendorID: CloudflareConfiguration.vendorID, environment: environment,
            reusesStoredPasses: configuration.reuseStoredPass)
    }

    /// The protected URL requested for `entry` (attribute `url` wins).
    package func target(for entry: Entry) -> String { entry.attributes["url"] ?? configuration.targetURL(for: entry.room) }

    func jarKey(_ entry: Entry) -> String { "\(entry.room)|\(entry.userId ?? "")" }

    /// The cookie jar kept for `entry` (empty before its first check). An entry may carry a
    /// `Cookie` header value in its attribute `cookie` to resume a visitor's place.
    package func cookieJar(for entry: Entry) -> CloudflareCookieJar {
        if let kept = jars.withLockedValue({ $0[jarKey(entry)] }) { return kept }
        return entry.attributes["cookie"].map { CloudflareCookieJar(cookieHeader: $0) } ?? CloudflareCookieJar()
    }

    func remember(_ jar: CloudflareCookieJar, for entry: Entry) { jars.withLockedValue { $0[jarKey(entry)] = jar } }

    /// One check with the retry policy: the answer and the jar after it. `onRetry` hears each retry.
    package func check(
        _ entry: Entry, jar: CloudflareCookieJar,
        onRetry: @escaping @Sendable (Int, WaitingRoomError) -> Void = { _, _ in }
    ) async throws -> (CloudflareAnswer, CloudflareCookieJar) {
        let client = client
        let url = target(for: entry)
        return try await configuration.retryPolicy.run(clock: environment.clock, vendor: vendorID, onRetry: onRetry) { _, timeout in
            var attemptJar = jar
            do {
                let answer = try await client.fetch(url: url, jar: &attemptJar, timeout: timeout)
                return (answer, attemptJar)
            } catch {
                if Task.isCancelled { throw CancellationError() }
                throw error
            }
        }
    }

    /// ``check(_:jar:onRetry:)`` with its failure as a value.
    func answer(
        for entry: Entry, jar: CloudflareCookieJar,
        onRetry: @escaping @Sendable (Int, WaitingRoomError) -> Void = { _, _ in }
    ) async -> Result<(CloudflareAnswer, CloudflareCookieJar), any Error> {
        do { return .success(try await check(entry, jar: jar, onRetry: onRetry)) } catch { return .failure(error) }
    }

    // MARK: what an answer means

    /// What one check (or its failure) means for the user.
    enum Verdict {
        case passed(Pass, VendorStatus)
        case disabled(Pass, VendorStatus)
        case queue(CloudflareWaitingRoomReply, QueueProgress, VendorStatus, next: Duration)
        case blocked(VendorStatus)
        case failed(WaitingRoomError)
    }

    /// `inLine`: the visitor was already answered as waiting in this wait (a full queue blocks
    /// only a visitor it has not taken in yet).
    func verdict(_ answer: Result<(CloudflareAnswer, CloudflareCookieJar), any Error>, entry: Entry, inLine: Bool = false) -> Verdict {
        switch answer {
        case .failure(let error):
            let e =
                error as? WaitingRoomError
                ?? WaitingRoomError(.networkOffline, vendor: vendorID, vendorCode: CloudflareCode.unreachable.rawValue, message: "\(error)")
            if e.kind == .rejected {
                return .blocked(VendorStatus(vendor: vendorID, code: e.vendorCode ?? CloudflareCode.refused.rawValue, message: e.message))
            }
            var failed = e
            failed.vendor = vendorID
            if failed.vendorCode == nil { failed.vendorCode = CloudflareCode.unreachable.rawValue }
            if configuration.failOpen, failed.vendorCode != CloudflareCode.cancelled.rawValue, !(error is CancellationError) {
                let now = environment.clock.now()
                let pass = Pass(
                    vendor: vendorID, room: entry.room, credential: "", kind: .token, issuedAt: now, targetURL: target(for: entry),
                    bypassedError: failed, details: ["failOpen": "true"])
                return .passed(pass, CloudflareCode.failedOpen.status("let through (failOpen): \(failed.message)"))
            }
            return .failed(failed)
        case .success(let (answer, jar)):
            switch answer {
            case .queued(let reply, let httpStatus):
                let text = Self.describe(reply, httpStatus: httpStatus)
                if reply.queueIsFull && configuration.blockWhenQueueIsFull && !inLine {
                    return .blocked(CloudflareCode.queueIsFull.status("queue is full: " + text))
                }
                if reply.rejects {
                    return .blocked(CloudflareCode.rejected.status("the room rejects visitors: " + text))
                }
                if reply.isEventPrequeueing {
                    // the event's countdown: nobody is let in before the start
                    let progress = QueueProgress(eta: reply.eventStartsIn, etaText: reply.timeUntilEventStartFormatted)
                    return .queue(
                        reply, progress, CloudflareCode.eventPrequeue.status(text), next: configuration.refreshInterval(after: reply))
                }
                let progress = QueueProgress(eta: reply.estimatedWait, etaText: reply.waitTimeFormatted)
                let code: CloudflareCode = reply.queueIsFull ? .queueIsFull : .queued
                return .queue(reply, progress, code.status(text), next: configuration.refreshInterval(after: reply))
            case .origin(let response):
                let pass = makePass(entry: entry, response: response, jar: jar)
                if !response.cookieHeld {
                    return .disabled(
                        pass,
                        CloudflareCode.suspended.status(
                            "no waiting room cookie: the origin answered HTTP \(response.status) (room suspended or not covering \(target(for: entry)))"
                        ))
                }
                if response.revoked {
                    return .passed(
                        pass,
                        CloudflareCode.revoked.status(
                            "the origin answered HTTP \(response.status) and revoked the session (Cf-Waiting-Room-Command: revoke)"))
                }
                return .passed(pass, CloudflareCode.origin.status("the origin answered HTTP \(response.status)"))
            }
        }
    }

    /// A queued reply as the event's message: the HTTP status, then the `cfWaitingRoom` object as
    /// it came (every field kept).
    static func describe(_ reply: CloudflareWaitingRoomReply, httpStatus: Int) -> String {
        "in the waiting room (HTTP \(httpStatus)): " + (reply.json.objectValue?[CloudflareWaitingRoomReply.member]?.jsonText ?? "{}")
    }

    /// The pass: the origin's response (status, content type, body up to 64 KiB as text) and the
    /// cookie to send with the visitor's next requests, valid for the session duration.
    func makePass(entry: Entry, response: CloudflareAnswer.OriginResponse, jar: CloudflareCookieJar) -> Pass {
        let now = environment.clock.now()
        var details = ["httpStatus": String(response.status), "body": String(decoding: response.body.prefix(64 * 1024), as: UTF8.self)]
        if let type = response.headers.value(for: "Content-Type") { details["contentType"] = type }
        if response.revoked { details["revoked"] = "true" }
        return Pass(
            vendor: vendorID, room: entry.room, credential: response.revoked ? "" : jar.header ?? "", kind: .token, issuedAt: now,
            expiresAt: now.addingTimeInterval(configuration.sessionDuration.seconds), targetURL: target(for: entry), details: details)
    }

    // MARK: WaitingRoomProvider

    public func tryPass(_ entry: Entry) async throws -> TryPassResult {
        if let stored = await passes.storedResult(entry.room, status: CloudflareCode.storedPass.status()) { return stored }
        let answer = await answer(for: entry, jar: cookieJar(for: entry))
        if case .success(let (_, jar)) = answer { remember(jar, for: entry) }
        switch verdict(answer, entry: entry) {
        case .passed(let pass, let s):
            await passes.keep(pass)
            return TryPassResult(disposition: .passed, status: s, pass: pass)
        case .disabled(let pass, let s):
            return TryPassResult(disposition: .disabled, status: s, pass: pass)
        case .queue(_, let progress, let s, _):
            let url = target(for: entry)
            return TryPassResult(disposition: .queue, status: s, queuePage: QueuePage(queueURL: url, targetURL: url), progress: progress)
        case .blocked(let s):
            return TryPassResult(disposition: .blocked, status: s)
        case .failed(let error):
            throw error
        }
    }

    public func enqueue(_ entry: Entry) throws -> WaitingSession {
        try dedup.session(for: entry, engine: PollingSessionEngine(CloudflareWait(provider: self)), environment: environment)
    }

    /// Forgets the stored pass (Cloudflare holds no key: an admitted session lapses after the
    /// room's `session_duration` without requests; only the origin can revoke it).
    public func release(_ pass: Pass) async throws -> VendorStatus {
        try await passes.forget(pass.room)
        return VendorStatus(vendor: vendorID, code: 0, message: "nothing to return: the session lapses after the room's session duration")
    }
}
