import Foundation
import WaitingRoom

/// The subset of mustache (https://mustache.github.io/) a custom waiting room page
/// (`custom_page_html`) is rendered with for a `…/waiting_rooms/preview`: `{{name}}` (HTML-escaped),
/// `{{{name}}}` and `{{& name}}` (as is), `{{#name}}…{{/name}}` (shown when the value is true, a
/// non-zero number or a non-empty string), `{{^name}}…{{/name}}` (shown otherwise), `{{! comment}}`.
/// Lists, partials and delimiter changes are not rendered (proposal: the preview is for the
/// variables Cloudflare documents, which are scalars). Pure: any text renders, none traps; an
/// unclosed tag is left as text, an unclosed section runs to the end, sections nest at most
/// ``maximumDepth`` deep (a deeper one renders as if shown).
package enum CloudflarePageTemplate {
    /// The deepest nesting of sections rendered as sections.
    package static let maximumDepth = 32

    /// `template` with `values` filled in (an unknown name renders as nothing).
    package static func render(_ template: String, _ values: [String: JSONValue]) -> String {
        var out = ""
        var i = template.startIndex
        render(template, &i, until: nil, values, into: &out, shown: true, depth: 0)
        return out
    }

    /// Renders from `i` until the `{{/closing}}` tag (consumed) or the end.
    private static func render(
        _ t: String, _ i: inout String.Index, until closing: String?, _ values: [String: JSONValue],
        into out: inout String, shown: Bool, depth: Int
    ) {
        while i < t.endIndex {
            guard let open = t.range(of: "{{", range: i..<t.endIndex) else {
                if shown { out += t[i...] }
                i = t.endIndex
                return
            }
            if shown { out += t[i..<open.lowerBound] }
            let triple = t[open.upperBound...].hasPrefix("{")
            let end = triple ? "}}}" : "}}"
            let start = triple ? t.index(after: open.upperBound) : open.upperBound
            guard let close = t.range(of: end, range: start..<t.endIndex) else {
                if shown { out += t[open.lowerBound...] }
                i = t.endIndex
                return
            }
            i = close.upperBound
            let tag = t[start..<close.lowerBound].trimmingCharacters(in: .whitespaces)
            if triple {
                if shown { out += text(values[tag]) }
                continue
            }
            guard let sigil = tag.first else { continue }
            let name = tag.dropFirst().trimmingCharacters(in: .whitespaces)
            switch sigil {
            case "!": continue
            case "&": if shown { out += text(values[name]) }
            case "#", "^":
                // too deep: the section's text renders as its parent's
                guard depth < maximumDepth else { continue }
                let truthy = isTruthy(values[name])
                render(t, &i, until: name, values, into: &out, shown: shown && (sigil == "#" ? truthy : !truthy), depth: depth + 1)
            case "/":
                if name == closing { return }
            default:
                if shown { out += HTMLText.escape(text(values[tag])) }
            }
        }
    }

    static func text(_ value: JSONValue?) -> String {
        switch value {
        case .string(let s): s
        case .number(let n): n.rounded() == n && abs(n) < 1e15 ? String(Int64(n)) : String(n)
        case .bool(let b): b ? "true" : "false"
        default: ""
        }
    }

    static func isTruthy(_ value: JSONValue?) -> Bool {
        switch value {
        case .bool(let b): b
        case .number(let n): n != 0
        case .string(let s): !s.isEmpty
        case .array(let a): !a.isEmpty
        case .object: true
        default: false
        }
    }
}
