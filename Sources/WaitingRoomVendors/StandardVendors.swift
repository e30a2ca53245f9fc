import Cloudflare
import CrowdHandler
import NetFUNNEL
import QueueIt
import ScriptedVendor
import WaitingRoom
import WaitingRoomHTTP

extension VendorRegistry {
    /// Every vendor this package ships, registered under its id: `netfunnel`, `queueit`, `crowdhandler`, `cloudflare`, and
    /// `scripted` (the in-memory test vendor). Adding a vendor = one line here.
    ///
    /// Its first use bootstraps the default transport (``AsyncHTTPTransport/shared``) unless the
    /// app bootstrapped its own (``HTTPTransportSystem``), so providers made from it, and
    /// `ProviderEnvironment()` afterwards, send requests.
    public static let standard: VendorRegistry = {
        AsyncHTTPTransport.bootstrapIfUnset()
        let registry = VendorRegistry()
        registry.register(NetFUNNELConfiguration.self, summary: "NetFUNNEL (STCLab): basic and section control over /ts.wseq")
        registry.register(QueueItConfiguration.self, summary: "Queue-it: mobile enqueue API, queue page, KnownUser tokens")
        registry.register(
            CrowdHandlerConfiguration.self, summary: "CrowdHandler: public API /v1/requests, waiting room, trustOnFail, hybrid signatures")
        registry.register(
            CloudflareConfiguration.self,
            summary: "Cloudflare Waiting Room: JSON mode (Accept: application/json, __cfwaitingroom cookie, refreshIntervalSeconds)")
        registry.register(ScriptedConfiguration.self, summary: "scripted: plays a given list of events (tests, flow authoring)")
        return registry
    }()
}
