/// Reads a bypass rule's expression (the emulator's subset of Cloudflare's Rules language) into a
/// ``CloudflareRuleExpression``, or throws a ``CloudflareRuleExpressionParser/Failure`` naming the
/// column and what was expected. Bounded: at most ``maxLength`` bytes and ``maxDepth`` levels of
/// nesting, so no input can exhaust the stack.
///
/// The subset (Rules language: https://developers.cloudflare.com/ruleset-engine/rules-language/):
/// - string fields `http.request.uri.path`, `http.request.uri.query`, `http.request.uri`,
///   `http.host`, `http.request.method`, `http.cookie`, `http.user_agent`, `http.referer` with
///   `eq`/`==`, `ne`/`!=`, `contains`, `in {"a" "b"}`, and the functions `starts_with(field, "x")`,
///   `ends_with(field, "x")`;
/// - `ip.src` with `eq`/`==`, `ne`/`!=` and `in {192.0.2.1 10.0.0.0/8 2001:db8::/32}`;
/// - `any(http.request.headers["name"][*] OP "value")` and the same for `http.request.cookies`;
/// - `and`/`&&`, `or`/`||`, `not`/`!`, parentheses.
struct CloudflareRuleExpressionParser {
    /// Why an expression could not be read: where (1-based column) and what.
    struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        var column: Int
        var reason: String
        var description: String { "at column \(column): \(reason)" }
    }

    /// The longest expression read (proposal: Cloudflare's own limit for rule expressions is not
    /// stated for waiting-room rules).
    static let maxLength = 4096
    /// The deepest nesting of parentheses and `not` read.
    static let maxDepth = 32

    enum Token: Hashable {
        case word(String)  // field names, operators, function names, bare IP addresses
        case string(String)
        case symbol(String)  // ( ) { } [ ] , == != && || ! [*]
    }

    var tokens: [(token: Token, column: Int)] = []
    var index = 0
    var depth = 0
    let end: Int

    /// Parses `text`.
    static func parse(_ text: String) throws(Failure) -> CloudflareRuleExpression {
        guard text.utf8.count <= maxLength else { throw Failure(column: maxLength + 1, reason: "longer than \(maxLength) bytes") }
        var parser = CloudflareRuleExpressionParser(tokens: try tokenize(text), end: text.count + 1)
        guard !parser.tokens.isEmpty else { throw Failure(column: 1, reason: "empty expression") }
        let expression = try parser.orExpression()
        if parser.index < parser.tokens.count {
            throw Failure(
                column: parser.tokens[parser.index].column,
                reason: "unexpected \(describe(parser.tokens[parser.index].token)) after a complete expression")
        }
        return expression
    }

    static func describe(_ t: Token) -> String {
        switch t {
        case .word(let w): return "\"\(w)\""
        case .string(let s): return "string \"\(s.prefix(40))\""
        case .symbol(let s): return "\"\(s)\""
        }
    }

    static func tokenize(_ text: String) throws(Failure) -> [(token: Token, column: Int)] {
        let chars = Array(text)
        var out: [(token: Token, column: Int)] = []
        var i = 0
        func isWord(_ c: Character) -> Bool { c.isLetter || c.isNumber || c == "_" || c == "." || c == ":" || c == "/" }
        while i < chars.count {
            let c = chars[i]
            let column = i + 1
            if c.isWhitespace {
                i += 1
                continue
            }
            if c == "\"" {
                var value = ""
                i += 1
                var closed = false
                while i < chars.count {
                    let d = chars[i]
                    if d == "\\" {
                        guard i + 1 < chars.count, chars[i + 1] == "\"" || chars[i + 1] == "\\" else {
                            throw Failure(column: i + 1, reason: "only \\\" and \\\\ may follow a backslash in a string")
                        }
                        value.append(chars[i + 1])
                        i += 2
                        continue
                    }
                    if d == "\"" {
                        closed = true
                        i += 1
                        break
                    }
                    value.append(d)
                    i += 1
                }
                guard closed else { throw Failure(column: column, reason: "a string that is not closed with \"") }
                out.append((.string(value), column))
                continue
            }
            let two = i + 1 < chars.count ? String(chars[i...i + 1]) : ""
            if ["==", "!=", "&&", "||"].contains(two) {
                out.append((.symbol(two), column))
                i += 2
                continue
            }
            if c == "[", i + 2 < chars.count, chars[i + 1] == "*", chars[i + 2] == "]" {
                out.append((.symbol("[*]"), column))
                i += 3
                continue
            }
            if "(){}[],!".contains(c) {
                out.append((.symbol(String(c)), column))
                i += 1
                continue
            }
            if isWord(c) {
                var w = ""
                while i < chars.count, isWord(chars[i]) {
                    w.append(chars[i])
                    i += 1
                }
                out.append((.word(w), column))
                continue
            }
            throw Failure(column: column, reason: "unexpected character \"\(c)\"")
        }
        return out
    }

    // MARK: grammar

    var column: Int { index < tokens.count ? tokens[index].column : end }

    func peek() -> Token? { index < tokens.count ? tokens[index].token : nil }

    mutating func next(_ expected: String) throws(Failure) -> Token {
        guard index < tokens.count else { throw Failure(column: end, reason: "the expression ends; expected \(expected)") }
        defer { index += 1 }
        return tokens[index].token
    }

    mutating func expect(_ symbol: String) throws(Failure) {
        let c = column
        let t = try next("\"\(symbol)\"")
        guard t == .symbol(symbol) else { throw Failure(column: c, reason: "expected \"\(symbol)\", got \(Self.describe(t))") }
    }

    mutating func orExpression() throws(Failure) -> CloudflareRuleExpression {
        var left = try andExpression()
        while let t = peek(), t == .word("or") || t == .symbol("||") {
            index += 1
            left = .or(left, try andExpression())
        }
        return left
    }

    mutating func andExpression() throws(Failure) -> CloudflareRuleExpression {
        var left = try unary()
        while let t = peek(), t == .word("and") || t == .symbol("&&") {
            index += 1
            left = .and(left, try unary())
        }
        return left
    }

    mutating func nested<T>(_ body: (inout Self) throws(Failure) -> T) throws(Failure) -> T {
        depth += 1
        defer { depth -= 1 }
        guard depth <= Self.maxDepth else { throw Failure(column: column, reason: "nested deeper than \(Self.maxDepth) levels") }
        return try body(&self)
    }

    mutating func unary() throws(Failure) -> CloudflareRuleExpression {
        if let t = peek(), t == .word("not") || t == .symbol("!") {
            index += 1
            return .not(try nested { (p: inout Self) throws(Failure) in try p.unary() })
        }
        if peek() == .symbol("(") {
            index += 1
            let inner = try nested { (p: inout Self) throws(Failure) in try p.orExpression() }
            try expect(")")
            return inner
        }
        return try condition()
    }

    mutating func condition() throws(Failure) -> CloudflareRuleExpression {
        let c = column
        let t = try next("a field, a function, \"not\" or \"(\"")
        guard case .word(let name) = t else {
            throw Failure(column: c, reason: "expected a field, a function, \"not\" or \"(\", got \(Self.describe(t))")
        }
        switch name {
        case "starts_with", "ends_with":
            try expect("(")
            let field = try stringField()
            try expect(",")
            let value = try string()
            try expect(")")
            return .affix(field, value, suffix: name == "ends_with")
        case "any":
            try expect("(")
            let mc = column
            let mt = try next("http.request.headers or http.request.cookies")
            guard case .word(let mname) = mt, let map = CloudflareRuleExpression.MapField(rawValue: mname) else {
                throw Failure(
                    column: mc, reason: "expected http.request.headers or http.request.cookies inside any(…), got \(Self.describe(mt))")
            }
            try expect("[")
            let key = try string()
            try expect("]")
            try expect("[*]")
            let op = try stringOperator()
            let value = try string()
            try expect(")")
            return .any(map, key: map == .headers ? key.lowercased() : key, op, value)
        case "ip.src":
            return try ipCondition()
        default:
            guard let field = CloudflareRuleExpression.StringField(rawValue: name) else {
                throw Failure(
                    column: c,
                    reason: "\"\(name)\" is not a field or function this emulator reads (fields: "
                        + (CloudflareRuleExpression.StringField.allCases.map(\.rawValue) + ["ip.src"]).joined(separator: ", ")
                        + "; functions: starts_with, ends_with, any)")
            }
            if peek() == .word("in") {
                index += 1
                try expect("{")
                var values: Set<String> = []
                while peek() != .symbol("}") { values.insert(try string()) }
                try expect("}")
                return .stringIn(field, values)
            }
            let op = try stringOperator()
            return .compare(field, op, try string())
        }
    }

    mutating func stringField() throws(Failure) -> CloudflareRuleExpression.StringField {
        let c = column
        let t = try next("a string field")
        guard case .word(let name) = t, let field = CloudflareRuleExpression.StringField(rawValue: name) else {
            throw Failure(
                column: c,
                reason:
                    "expected a string field (\(CloudflareRuleExpression.StringField.allCases.map(\.rawValue).joined(separator: ", "))), got \(Self.describe(t))"
            )
        }
        return field
    }

    mutating func stringOperator() throws(Failure) -> CloudflareRuleExpression.StringOperator {
        let c = column
        let t = try next("eq, ne or contains")
        switch t {
        case .word("eq"), .symbol("=="): return .eq
        case .word("ne"), .symbol("!="): return .ne
        case .word("contains"): return .contains
        default: throw Failure(column: c, reason: "expected eq, ==, ne, != or contains, got \(Self.describe(t))")
        }
    }

    mutating func string() throws(Failure) -> String {
        let c = column
        let t = try next("a string in double quotes")
        guard case .string(let s) = t else {
            throw Failure(column: c, reason: "expected a string in double quotes, got \(Self.describe(t))")
        }
        return s
    }

    mutating func ipCondition() throws(Failure) -> CloudflareRuleExpression {
        func range(_ p: inout Self) throws(Failure) -> CloudflareRuleExpression.IPRange {
            let c = p.column
            let t = try p.next("an IP address or CIDR range")
            let text: String
            switch t {
            case .word(let w): text = w
            case .string(let s): text = s
            default: throw Failure(column: c, reason: "expected an IP address or CIDR range, got \(Self.describe(t))")
            }
            guard let r = CloudflareRuleExpression.IPRange(text) else {
                throw Failure(column: c, reason: "\"\(text)\" is not an IPv4 or IPv6 address or CIDR range")
            }
            return r
        }
        let c = column
        let t = try next("eq, ne or in")
        switch t {
        case .word("eq"), .symbol("=="): return .ipIn([try range(&self)])
        case .word("ne"), .symbol("!="): return .not(.ipIn([try range(&self)]))
        case .word("in"):
            try expect("{")
            var ranges: [CloudflareRuleExpression.IPRange] = []
            while peek() != .symbol("}") { ranges.append(try range(&self)) }
            try expect("}")
            return .ipIn(ranges)
        default:
            throw Failure(column: c, reason: "expected eq, ==, ne, != or in after ip.src, got \(Self.describe(t))")
        }
    }
}
