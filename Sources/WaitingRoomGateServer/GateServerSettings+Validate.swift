import CrowdHandlerGateEngine
import Foundation
import WaitingRoomGate
import WaitingRoomGateProxy

/// A ``GateServerSettings`` the gate cannot run with; the message names the flag and what it must be.
package struct GateSettingsError: Error, CustomStringConvertible, Sendable {
    /// What is wrong, naming the flag.
    package var message: String

    package init(_ message: String) { self.message = message }

    package var description: String { message }
}

extension GateServerSettings {
    /// The vendor, its mode, and where requests go (`--upstream` or `--authz`): what every gate
    /// must say.
    package func validateRequired() throws(GateSettingsError) {
        guard ["queueit", "crowdhandler"].contains(vendor) else { throw GateSettingsError("--vendor must be queueit or crowdhandler") }
        guard CrowdHandlerGate.Mode(rawValue: mode) != nil else { throw GateSettingsError("--mode must be full or hybrid") }
        if authz {
            guard upstream.isEmpty else {
                throw GateSettingsError("--authz answers a proxy's subrequests; the proxy forwards to the app: leave out --upstream")
            }
        } else if upstream.isEmpty {
            throw GateSettingsError("--upstream is required (or --authz, behind nginx, Caddy, Traefik or Envoy)")
        }
    }

    /// Every other value in its range and form (``validateRequired()`` first).
    package func validate() throws(GateSettingsError) {
        if configURL != nil || configInterval != 300 {
            guard vendor == "queueit" else { throw GateSettingsError("--config-url and --config-interval are for --vendor queueit") }
        }
        if let configURL, !(configURL.hasPrefix("https://") || configURL.hasPrefix("http://")) {
            throw GateSettingsError("--config-url must be an http(s) URL, got '\(configURL)'")
        }
        guard (1...86_400).contains(configInterval) else { throw GateSettingsError("--config-interval must be 1…86400 seconds") }
        guard ["open", "closed"].contains(ledgerUnavailable) else { throw GateSettingsError("--ledger-unavailable must be open or closed") }
        if let state, state.isEmpty || state.lowercased().hasSuffix(".json") {
            throw GateSettingsError("--state for the gate must be an SQLite file or postgres://USER@HOST:PORT/DB")
        }
        guard authz || GateUpstreamAddress(parsing: upstream) != nil else {
            throw GateSettingsError(
                "--upstream must be http://HOST:PORT (plain HTTP) or unix:PATH (a socket path of at most \(GateUpstreamAddress.maxSocketPathBytes) bytes), got '\(upstream)'"
            )
        }
        if listen.hasPrefix("unix:") {
            guard authz else {
                throw GateSettingsError(
                    "--listen unix:PATH is for --authz (a proxy on this machine asks the gate); the reverse proxy listens on HOST:PORT")
            }
            guard GateListenAddress(unixSocket: listen) != nil else {
                throw GateSettingsError(
                    "--listen unix:PATH takes a socket path of 1 to \(GateListenAddress.maxSocketPathBytes) bytes, got '\(listen)'")
            }
        } else if Self.hostAndPort(listen) == nil {
            throw GateSettingsError("--listen must be HOST:PORT (port 0…65535) or, with --authz, unix:PATH, got '\(listen)'")
        }
        guard (1...100_000).contains(maxConnections) else { throw GateSettingsError("--max-connections must be 1…100000") }
        guard (1...86_400).contains(timeout) else { throw GateSettingsError("--timeout must be 1…86400 seconds") }
        if let cookieSameSite, !["Lax", "Strict", "None"].contains(cookieSameSite) {
            throw GateSettingsError("--cookie-samesite must be Lax, Strict or None, got '\(cookieSameSite)'")
        }
        guard (1...86_400).contains(bodyTimeout) else { throw GateSettingsError("--body-timeout must be 1…86400 seconds") }
        guard (0...100_000).contains(maxPerClient) else { throw GateSettingsError("--max-connections-per-client must be 0…100000") }
        guard (1...600).contains(connectTimeout) else { throw GateSettingsError("--connect-timeout must be 1…600 seconds") }
        guard maxBodyBytes >= 0 else { throw GateSettingsError("--max-body-bytes must be 0 or more") }
        if let threads, !(1...256).contains(threads) { throw GateSettingsError("--threads must be 1…256") }
        guard (0...1_000_000).contains(sessionMemo) else { throw GateSettingsError("--session-memo must be 0…1000000") }
        for host in allowedHosts where !GateOrigin.isAuthority(host) {
            throw GateSettingsError("--allowed-host must be host or host:port, got '\(host)'")
        }
        for proxy in trustedProxies where GateOrigin.canonicalIPAddress(proxy) == nil {
            throw GateSettingsError("--trusted-proxy must be an IP address (one proxy; no host names or CIDR ranges), got '\(proxy)'")
        }
        if let publicURL, !(publicURL.hasPrefix("http://") || publicURL.hasPrefix("https://")) {
            throw GateSettingsError("--public-url must start with http:// or https://")
        }
        // scheme://host[:port] and nothing else: `http://` alone, a path or a query would make
        // every trigger see another URL than visitors use
        if let publicURL, let separator = publicURL.range(of: "://") {
            var authority = publicURL[separator.upperBound...]
            while authority.hasSuffix("/") { authority.removeLast() }
            guard GateOrigin.isAuthority(String(authority)) else {
                throw GateSettingsError("--public-url must be scheme://host[:port], got \(publicURL)")
            }
        }
    }
}
