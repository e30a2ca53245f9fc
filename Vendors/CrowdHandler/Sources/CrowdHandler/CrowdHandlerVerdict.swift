import Foundation
import WaitingRoom

/// What a CrowdHandler answer means: promoted → passed, not promoted → the room's queue, 4xx →
/// blocked, and failures by the failure policy (`trustOnFail`, the safety-net room).
extension CrowdHandlerProvider {
    /// What one check (or its failure) means for the user.
    enum Verdict: Sendable {
        case passed(Pass, VendorStatus)
        case disabled(VendorStatus)
        case queue(slug: String, token: String?, progress: QueueProgress, VendorStatus)
        case blocked(VendorStatus)
        case safetyNet(slug: String, token: String?, WaitingRoomError)
        case failed(WaitingRoomError)
    }

    func verdict(_ answer: Result<CrowdHandlerResult, WaitingRoomError>, entry: Entry, token: String?) -> Verdict {
        switch answer {
        case .failure(let error):
            if error.kind == .rejected {
                return .blocked(VendorStatus(vendor: vendorID, code: error.vendorCode ?? 403, message: error.message))
            }
            return onFailure(error, entry: entry, token: token)
        case .success(let r):
            if !r.promoted, r.status == CrowdHandlerCode.checkFailed.rawValue {
                // status 2 and not promoted: an abnormal answer (the Cloudflare integration's safety-net case)
                return onFailure(
                    WaitingRoomError(
                        .server, vendor: vendorID, vendorCode: CrowdHandlerCode.checkFailed.rawValue,
                        message: r.error ?? "abnormal API answer (status 2)"), entry: entry, token: r.token ?? token)
            }
            if r.status == CrowdHandlerCode.throttled.rawValue {
                return onFailure(
                    WaitingRoomError(
                        .server, vendor: vendorID, vendorCode: CrowdHandlerCode.throttled.rawValue,
                        message: CrowdHandlerCode.throttled.message), entry: entry, token: r.token ?? token)
            }
            if r.promoted {
                guard let slug = r.slug, !slug.isEmpty else {
                    return .disabled(CrowdHandlerCode.ok.status("promoted: no waiting room guards \(target(for: entry))"))
                }
                return .passed(makePass(entry: entry, result: r, slug: slug), CrowdHandlerCode.ok.status("promoted (room \(slug))"))
            }
            guard let slug = r.slug, !slug.isEmpty else {
                if let e = r.error {
                    return onFailure(
                        WaitingRoomError(
                            .server, vendor: vendorID, vendorCode: r.status ?? CrowdHandlerCode.checkFailed.rawValue,
                            message: e), entry: entry, token: r.token ?? token)
                }
                return onFailure(
                    WaitingRoomError(
                        .invalidResponse, vendor: vendorID, vendorCode: CrowdHandlerCode.checkFailed.rawValue,
                        message: "not promoted, and no waiting room slug"), entry: entry, token: r.token ?? token)
            }
            let position = r.position.map { max(0, $0) }
            let progress = QueueProgress(ahead: position.map { max(0, $0 - 1) }, eta: r.eta.map { .seconds(max(0, $0)) })
            return .queue(
                slug: slug, token: r.token ?? token, progress: progress,
                CrowdHandlerCode.ok.status("waiting in room \(slug)" + (position.map { ", position \($0)" } ?? "")))
        }
    }

    /// The failure policy: `trustOnFail` lets the user in (the error kept on the pass); else the
    /// safety-net room, or the error.
    func onFailure(_ error: WaitingRoomError, entry: Entry, token: String?) -> Verdict {
        var error = error
        error.vendor = vendorID
        if configuration.trustOnFail {
            let code: CrowdHandlerCode = error.vendorCode == CrowdHandlerCode.throttled.rawValue ? .throttled : .checkFailed
            let pass = Pass(
                vendor: vendorID, room: entry.room, credential: token ?? "", kind: .token, issuedAt: environment.clock.now(),
                targetURL: target(for: entry), bypassedError: error, details: ["trustOnFail": "true"])
            return .passed(pass, code.status("trusted on fail: \(error.message)"))
        }
        if let slug = configuration.safetyNetSlug { return .safetyNet(slug: slug, token: token, error) }
        return .failed(
            WaitingRoomError(
                .unavailable, vendor: vendorID, vendorCode: CrowdHandlerCode.checkFailed.rawValue,
                message: "the check failed and trustOnFail is false (no safety-net room): \(error.message)",
                details: ["cause": error.kind.rawValue, "causeCode": error.vendorCode.map(String.init) ?? ""]))
    }

    func makePass(entry: Entry, result r: CrowdHandlerResult, slug: String) -> Pass {
        let now = environment.clock.now()
        var details = ["slug": slug]
        if let id = r.responseID { details["responseID"] = id }
        if let h = r.hash { details["hash"] = h }
        if let q = r.requested { details["requested"] = q }
        return Pass(
            vendor: vendorID, room: entry.room, credential: r.token ?? "", kind: .token, issuedAt: now,
            expiresAt: now.addingTimeInterval(configuration.passLifetime.seconds), targetURL: target(for: entry), details: details)
    }
}
