import NetFUNNEL
import QueueIt
import WaitingRoom
import ScriptedVendor

extension VendorRegistry {
    /// Every vendor this package ships, registered under its id: `netfunnel`, `queueit`, and
    /// `scripted` (the in-memory test vendor). Adding a vendor = one line here.
    public static let standard: VendorRegistry = {
        let registry = VendorRegistry()
        registry.register(NetFUNNELConfiguration.self, summary: "NetFUNNEL (STCLab): basic and section control over /ts.wseq")
        registry.register(QueueItConfiguration.self, summary: "Queue-it: mobile enqueue API, queue page, KnownUser tokens")
        registry.register(ScriptedConfiguration.self, summary: "scripted: plays a given list of events (tests, flow authoring)")
        return registry
    }()
}
