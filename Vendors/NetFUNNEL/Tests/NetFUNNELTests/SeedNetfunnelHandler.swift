// The NetfunnelHandler example of the NetFUNNEL iOS agent guide (4.6.1), ported with only the
// import changed (`Netfunnel_iOS` → `NetFUNNEL`). It must keep compiling unchanged.
import Foundation
import NetFUNNEL

class NetfunnelHandler: NSObject, NetfunnelDelegate {

    static let shared = NetfunnelHandler()

    // MARK: - Required callback closures
    var onSuccess: ((String, String, Int, String) -> Void)?
    var onError: ((String, String, Int, String) -> Void)?
    var onNetworkError: ((String, String, Int, String) -> Void)?

    // MARK: - Optional callback closures
    var onContinue: ((String, String, Int, String, Int, Int, String, Int) -> Void)?
    var onBlock: ((String, String, Int, String) -> Void)?
    var onClose: ((String, String, Int, String) -> Void)?
    var onComplete: ((String, String, Int, String) -> Void)?

    private override init() {}

    // MARK: - NetfunnelDelegate Methods

    func nfSuccess(projectKey: String, segmentKey: String, statusCode: Int, message: String) {
        NSLog("nfSuccess \(statusCode) \(message)")
        /**
         * Logic to run when queue is passed
         * ex - service screen entry
         */
        onSuccess?(projectKey, segmentKey, statusCode, message)
    }

    func nfError(projectKey: String, segmentKey: String, statusCode: Int, message: String) {
        NSLog("nfError \(statusCode) \(message)")
        /**
         * Logic to run on error
         * ex - show error message to user or bypass
         */
        onError?(projectKey, segmentKey, statusCode, message)
    }

    func nfNetworkError(projectKey: String, segmentKey: String, statusCode: Int, message: String) {
        NSLog("nfNetworkError \(statusCode) \(message)")
        /**
         * Logic to run on network error
         * ex - guide to reconnect or navigate to retry screen
         */
        onNetworkError?(projectKey, segmentKey, statusCode, message)
    }

    func nfContinue(
        projectKey: String, segmentKey: String, statusCode: Int, message: String,
        aheadWait: Int, behindWait: Int, waitTime: String, progressRate: Int
    ) {
        NSLog("nfContinue \(statusCode) \(message)")
        /**
         * UI update logic while waiting (only when not using NetFUNNEL waiting room)
         * ex - update custom waiting screen with real-time wait info
         */
        onContinue?(projectKey, segmentKey, statusCode, message, aheadWait, behindWait, waitTime, progressRate)
    }

    func nfBlock(projectKey: String, segmentKey: String, statusCode: Int, message: String) {
        NSLog("nfBlock \(statusCode) \(message)")
        /**
         * Logic when user entry is blocked
         * ex - show access denied message
         */
        onBlock?(projectKey, segmentKey, statusCode, message)
    }

    func nfClose(projectKey: String, segmentKey: String, statusCode: Int, message: String) {
        NSLog("nfClose \(statusCode) \(message)")
        /**
         * Logic when user cancels wait
         * ex - show exit Toast (WebView returns automatically)
         */
        onClose?(projectKey, segmentKey, statusCode, message)
    }

    func nfComplete(projectKey: String, segmentKey: String, statusCode: Int, message: String) {
        NSLog("nfComplete \(statusCode) \(message)")
        /**
         * Logic when finally complete
         * ex - post-wait follow-up
         */
        onComplete?(projectKey, segmentKey, statusCode, message)
    }
}
