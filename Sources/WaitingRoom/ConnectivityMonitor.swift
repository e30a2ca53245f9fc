import Foundation

/// Tells whether the device can reach a host at all (a route and a network interface that is
/// up), without sending anything. Vendors ask it when a request fails, to tell "the device is
/// offline" (Queue-it `-100`, NetFUNNEL `1001`) from "the vendor did not answer".
///
/// The default is ``SystemConnectivityMonitor``; an app with its own network monitor (a mobile
/// app's path monitor, a server's health checks) passes its own in ``ProviderEnvironment``.
/// Requirements: cheap and non-blocking (it is called on the failing request's task), and
/// `false` when unsure (the vendors then report the failure as the vendor documents a failed
/// request, not as offline).
public protocol ConnectivityMonitor: Sendable {
    /// True when the device is known to have no route to `host` (nil: any host).
    func isOffline(host: String?) -> Bool
}

/// Never offline: failures are reported as failed requests.
package struct AssumeOnline: ConnectivityMonitor {
    package init() {}
    public func isOffline(host: String?) -> Bool { false }
}

/// The default monitor on Linux: reads the kernel's routing table (`/proc/net/route`,
/// `/proc/net/ipv6_route`) and the interfaces' state (`/sys/class/net/<if>/operstate` and
/// `flags`) on each call: a few small file reads, no request sent, no thread kept.
///
/// - A loopback host (`localhost`, `127.0.0.0/8`, `::1`) is never offline.
/// - Otherwise the device is offline when no route (IPv4 or IPv6, a default route or any other)
///   leaves through an interface other than `lo` that is up (`IFF_UP`) and whose operational
///   state is not `down`.
/// - When the tables cannot be read (not Linux, a sandbox without `/proc`), it is never offline.
public struct SystemConnectivityMonitor: ConnectivityMonitor {
    /// Where the tables are read from (tests point it at a folder of their own).
    package var procNet: String
    package var sysClassNet: String

    public init(procNet: String = "/proc/net", sysClassNet: String = "/sys/class/net") {
        self.procNet = procNet
        self.sysClassNet = sysClassNet
    }

    /// Whether `host` names this machine's loopback.
    package static func isLoopback(_ host: String) -> Bool {
        var h = host.lowercased()
        if h.hasPrefix("["), h.hasSuffix("]") { h = String(h.dropFirst().dropLast()) }
        return h == "localhost" || h.hasSuffix(".localhost") || h.hasPrefix("127.") || h == "::1"
    }

    public func isOffline(host: String?) -> Bool {
        if let host, Self.isLoopback(host) { return false }
        guard let interfaces = routedInterfaces() else { return false }
        return !interfaces.contains { $0 != "lo" && isUp($0) }
    }

    /// The interfaces that carry a usable route (nil when neither table can be read).
    func routedInterfaces() -> Set<String>? {
        var found = Set<String>()
        var readAny = false
        if let v4 = try? String(contentsOfFile: procNet + "/route", encoding: .utf8) {
            readAny = true
            // Iface Destination Gateway Flags …; RTF_UP = 0x1
            for line in v4.split(separator: "\n").dropFirst() {
                let f = line.split(whereSeparator: { $0 == "\t" || $0 == " " })
                guard f.count > 3, let flags = Int(f[3], radix: 16), flags & 1 != 0 else { continue }
                found.insert(String(f[0]))
            }
        }
        if let v6 = try? String(contentsOfFile: procNet + "/ipv6_route", encoding: .utf8) {
            readAny = true
            // dest plen src plen nexthop metric refcnt use flags iface; RTF_UP = 0x1
            for line in v6.split(separator: "\n") {
                let f = line.split(separator: " ", omittingEmptySubsequences: true)
                guard f.count >= 10, let flags = Int(f[8], radix: 16), flags & 1 != 0 else { continue }
                let dest = f[0]
                // link-local and multicast routes say nothing about reaching the world
                if dest.hasPrefix("fe80") || dest.hasPrefix("ff") { continue }
                found.insert(String(f[9]))
            }
        }
        return readAny ? found : nil
    }

    func isUp(_ interface: String) -> Bool {
        let base = sysClassNet + "/" + interface
        if let state = try? String(contentsOfFile: base + "/operstate", encoding: .utf8),
            state.trimmingCharacters(in: .whitespacesAndNewlines) == "down"
        {
            return false
        }
        if let text = try? String(contentsOfFile: base + "/flags", encoding: .utf8) {
            let hex = text.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: "0x", with: "")
            if let flags = Int(hex, radix: 16) { return flags & 1 != 0 }  // IFF_UP
        }
        return true
    }
}
