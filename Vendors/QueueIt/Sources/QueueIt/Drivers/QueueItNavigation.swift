import Foundation

/// What a navigation on the queue page means (docs/queueit-protocol.md §4), decided without a web view.
public enum QueueItNavigation: Sendable, Hashable {
    /// Let the navigation happen (empty URL, `about:blank`, redirects and sub-resources elsewhere).
    case allow
    /// `queueit://close`: close the queue view.
    case close
    /// `queueit://restartSession`: close the view and enqueue anew.
    case restartSession
    /// A `/what-is-this.html` page: cancel the navigation.
    case blocked
    /// The target URL was reached: passed, with the decoded `queueittoken` (nil if absent).
    case passed(token: String?)
    /// A navigation on the queue host (a new queue-page URL).
    case queueURLChanged(URL)
    /// A link to another host or a non-web scheme: open it outside the queue view, cancel here.
    case external(URL)
}

/// How a navigation started (a web view tells these apart; a headless driver sees only redirects).
public enum QueueItNavigationKind: Sendable, Hashable {
    /// The visitor activated a link.
    case linkActivated
    /// A redirect, a script, a reload or anything else.
    case other
}

/// The navigation classifier: a pure function of the URL, the queue page and the target URL.
///
/// Rules, in order (our merge of iOS 3.5.2 and Android 3.0.0, docs/queueit-protocol.md §4):
/// 1. empty or `about:blank` ⇒ allow;
/// 2. `queueit://close` ⇒ close, `queueit://restartSession` ⇒ restart, matched case-sensitively:
///    the exact string (iOS, `QueueConsts.h`) or, with a path, query or fragment after it, the
///    exact scheme and host (Android `UriOverrider`); any other non-http(s) URL, including other
///    spellings such as `QUEUEIT://close` or `queueit://CLOSE`, ⇒ external;
/// 3. path starting with `/what-is-this.html` ⇒ blocked;
/// 4. host equal to the target's (case-insensitive) and path exactly equal ⇒ passed, token =
///    the percent-decoded `queueittoken` query parameter (Android; checked before the queue host);
/// 5. host equal to the queue URL's (and, with a path prefix, path under `/{prefix}/`) ⇒ queue URL changed;
/// 6. a link activated to another host ⇒ external; anything else ⇒ allow.
package struct QueueItNavigationClassifier: Sendable, Hashable {
    package let queueURL: URL
    package let targetURL: URL
    package let pathPrefix: String?

    package init(queueURL: URL, targetURL: URL, pathPrefix: String? = nil) {
        self.queueURL = queueURL
        self.targetURL = targetURL
        self.pathPrefix = QueueItEndpoint.sanitizePathPrefix(pathPrefix)
    }

    /// Classifies a navigation given as text (never fails: unparsable text is allowed).
    package func classify(_ urlString: String, kind: QueueItNavigationKind = .other) -> QueueItNavigation {
        let trimmed = urlString.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.isEmpty || trimmed == "about:blank" { return .allow }
        guard let url = URL(string: trimmed) else { return .allow }
        return classify(url, kind: kind)
    }

    /// Classifies a navigation.
    package func classify(_ url: URL, kind: QueueItNavigationKind = .other) -> QueueItNavigation {
        if url.absoluteString.isEmpty || url.absoluteString == "about:blank" { return .allow }
        let scheme = url.scheme?.lowercased() ?? ""
        if scheme != "http" && scheme != "https" {
            switch Self.queueItLinkHost(url.absoluteString) {
            case "close": return .close
            case "restartSession": return .restartSession
            default: break
            }
            if scheme.isEmpty { return .allow }
            return .external(url)
        }
        let path = Self.path(of: url)
        if path.hasPrefix("/what-is-this.html") { return .blocked }
        let host = url.host?.lowercased() ?? ""
        if host == (targetURL.host?.lowercased() ?? "\u{0}"), path == Self.path(of: targetURL) {
            return .passed(token: Self.queueItToken(in: url))
        }
        if host == (queueURL.host?.lowercased() ?? "\u{0}") {
            if let p = pathPrefix, !path.hasPrefix("/\(p)/") {
                // Behind a proxy the queue lives under the prefix only (Android 2.2.4).
            } else {
                return .queueURLChanged(url)
            }
        }
        return kind == .linkActivated ? .external(url) : .allow
    }

    /// The host of a `queueit://` link as written (case kept): the text after the literal,
    /// lower-case `queueit://` up to the first `/`, `?` or `#`; nil for anything else.
    static func queueItLinkHost(_ s: String) -> Substring? {
        guard s.hasPrefix("queueit://") else { return nil }
        let rest = s.dropFirst("queueit://".count)
        return rest.prefix(while: { $0 != "/" && $0 != "?" && $0 != "#" })
    }

    /// The path as written (percent escapes kept), "/" when empty.
    static func path(of url: URL) -> String {
        let p = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? url.path
        return p.isEmpty ? "/" : p
    }

    /// The decoded value of the first `queueittoken` query parameter (case-sensitive name).
    package static func queueItToken(in url: URL) -> String? {
        guard let q = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedQuery else { return nil }
        for item in QueueItPercent.queryItems(Substring(q)) where item.name == "queueittoken" {
            return item.value.isEmpty ? nil : item.value
        }
        return nil
    }
}
