/// The NetFUNNEL agent's callbacks, with the agent's names and parameters.
///
/// `nfSuccess`, `nfError` and `nfNetworkError` are required; `nfBlock`, `nfClose`, `nfContinue`
/// and `nfComplete` are optional (default: do nothing). Callbacks arrive on the main actor.
///
/// | callback | codes |
/// |---|---|
/// | `nfSuccess` | 200 pass, 300 bypass (segment inactive, bypass mode, `errorBypass`), 303 white list |
/// | `nfContinue` | 201 while waiting, only with `useNetfunnelTemplate: false` |
/// | `nfBlock` | 301 segment blocked, 302 black list / repeated requests |
/// | `nfError` | server 5xx codes as sent, 500 for bad use or a malformed reply |
/// | `nfNetworkError` | 1001 not connected, 1002 timeout (also HTTP errors and HTML pages) |
/// | `nfClose` | 499 waiting room cancelled (495–498 other rooms, not produced headlessly) |
/// | `nfComplete` | 200 key returned, 500 key return failed |
@MainActor
public protocol NetfunnelDelegate: AnyObject {
    /// Entry granted.
    func nfSuccess(projectKey: String, segmentKey: String, statusCode: Int, message: String)
    /// Server error; waiting stopped.
    func nfError(projectKey: String, segmentKey: String, statusCode: Int, message: String)
    /// Network error after the retries; waiting stopped.
    func nfNetworkError(projectKey: String, segmentKey: String, statusCode: Int, message: String)
    /// Entry refused (block room).
    func nfBlock(projectKey: String, segmentKey: String, statusCode: Int, message: String)
    /// The user closed the room.
    func nfClose(projectKey: String, segmentKey: String, statusCode: Int, message: String)
    /// Still waiting (only without the template).
    func nfContinue(
        projectKey: String, segmentKey: String, statusCode: Int, message: String, aheadWait: Int, behindWait: Int,
        waitTime: String, progressRate: Int)
    /// The key was returned (or could not be).
    func nfComplete(projectKey: String, segmentKey: String, statusCode: Int, message: String)
}

extension NetfunnelDelegate {
    public func nfBlock(projectKey: String, segmentKey: String, statusCode: Int, message: String) {}
    public func nfClose(projectKey: String, segmentKey: String, statusCode: Int, message: String) {}
    public func nfContinue(
        projectKey: String, segmentKey: String, statusCode: Int, message: String, aheadWait: Int, behindWait: Int,
        waitTime: String, progressRate: Int
    ) {}
    public func nfComplete(projectKey: String, segmentKey: String, statusCode: Int, message: String) {}
}
