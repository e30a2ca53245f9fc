import Foundation
import QueueItGateEngine
import Testing
import WaitingRoomGate
import WaitingRoomGateTestSupport

/// The integration configuration as Queue-it publishes it, and trigger matching as KU-JS's
/// `IntegrationEvaluator` does it.
@Suite struct QueueItIntegrationConfigTests {
    func part(_ json: String) throws -> QueueItTriggerPart {
        try JSONDecoder().decode(QueueItTriggerPart.self, from: Data(json.utf8))
    }

    let request = GateRequest(
        url: "https://Shop.Example:8443/Checkout/pay?x=1",
        headers: [
            GateHeader("User-Agent", "Mozilla/5.0 Googlebot"), GateHeader("Cookie", "seg=vip; other=1"), GateHeader("X-Tier", "gold")
        ])

    @Test func urlParts() throws {
        let url = request.url
        #expect(
            try part(#"{"ValidatorType":"UrlValidator","UrlPart":"PagePath","Operator":"Equals","ValueToCompare":"/Checkout/pay"}"#)
                .matches(request, url: url))
        #expect(
            try part(
                #"{"ValidatorType":"UrlValidator","UrlPart":"HostName","Operator":"Equals","ValueToCompare":"shop.example:8443","IsIgnoreCase":true}"#
            ).matches(request, url: url))
        #expect(
            try !part(#"{"ValidatorType":"UrlValidator","UrlPart":"PagePath","Operator":"Contains","ValueToCompare":"checkout"}"#).matches(
                request, url: url))
        #expect(
            try part(#"{"ValidatorType":"UrlValidator","UrlPart":"PageUrl","Operator":"Contains","ValueToCompare":"*"}"#).matches(
                request, url: url))
        #expect(
            try part(
                #"{"ValidatorType":"UrlValidator","UrlPart":"PagePath","Operator":"EqualsAny","ValuesToCompare":["/a","/checkout/PAY"],"IsIgnoreCase":true}"#
            ).matches(request, url: url))
        #expect(
            try part(
                #"{"ValidatorType":"UrlValidator","UrlPart":"PagePath","Operator":"ContainsAny","ValuesToCompare":["/x","/y"],"IsNegative":true}"#
            ).matches(request, url: url))
    }

    /// `Contains` and `Equals`, with and without `IsIgnoreCase`, as KU-JS's `indexOf` and
    /// `toUpperCase` give them: literal code units, upper-casing Unicode letters too.
    @Test func containsAndEqualsAsKUJS() throws {
        func holds(_ op: String, _ value: String, _ compared: String, ignoreCase: Bool) throws -> Bool {
            let escaped = compared.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            let p = try part(
                #"{"ValidatorType":"HttpHeaderValidator","HttpHeaderName":"X-V","Operator":""# + op
                    + #"","ValueToCompare":""# + escaped + #"","IsIgnoreCase":"# + (ignoreCase ? "true" : "false") + "}")
            return p.matches(GateRequest(url: "http://h/", headers: [GateHeader("X-V", value)]), url: "http://h/")
        }
        let rows: [(String, String, String, Bool, Bool)] = [
            ("Contains", "/Static/app.js", "/static/", true, true),
            ("Contains", "/Static/app.js", "/static/", false, false),
            ("Contains", "/static/", "/static/", false, true),
            ("Contains", "/stati", "/static/", true, false),
            ("Contains", "aaab", "aab", false, true),
            ("Contains", "x[Y]z", "[y]", true, true),
            ("Contains", "@`{", "@`{", true, true),
            ("Contains", "@`{", "`", true, true),
            ("Contains", "@", "`", true, false),
            ("Contains", "/Grüße", "GRÜSSE", true, true),
            ("Contains", "/café", "CAFÉ", true, true),
            ("Contains", "/café", "café", false, true),
            ("Contains", "/cafe\u{301}", "café", false, false),
            ("Contains", "", "*", true, false),
            ("Contains", "x", "*", false, true),
            ("Contains", "anything", "", false, true),
            ("Equals", "Shop", "shop", true, true),
            ("Equals", "Shop", "shop", false, false),
            ("Equals", "straße", "STRASSE", true, true),
            ("Equals", "a", "a ", true, false)
        ]
        for (op, value, compared, ignoreCase, expected) in rows {
            #expect(
                try holds(op, value, compared, ignoreCase: ignoreCase) == expected,
                "\(op) '\(value)' '\(compared)' ignoreCase \(ignoreCase)")
        }
    }

    @Test func cookieUserAgentAndHeaderParts() throws {
        let url = request.url
        #expect(
            try part(#"{"ValidatorType":"CookieValidator","CookieName":"seg","Operator":"Equals","ValueToCompare":"vip"}"#).matches(
                request, url: url))
        #expect(
            try part(
                #"{"ValidatorType":"UserAgentValidator","Operator":"Contains","ValueToCompare":"googlebot","IsIgnoreCase":true,"IsNegative":true}"#
            ).matches(request, url: url) == false)
        #expect(
            try part(#"{"ValidatorType":"HttpHeaderValidator","HttpHeaderName":"x-tier","Operator":"Equals","ValueToCompare":"gold"}"#)
                .matches(request, url: url))
        #expect(try !part(#"{"ValidatorType":"SomethingNew","Operator":"Equals","ValueToCompare":""}"#).matches(request, url: url))
        #expect(
            try !part(#"{"ValidatorType":"UrlValidator","UrlPart":"PagePath","Operator":"Regex","ValueToCompare":".*"}"#).matches(
                request, url: url))
    }

    @Test func configurationRulesAndErrors() throws {
        let config = try QueueItIntegrationConfig(json: QueueItGateFixture.configurationJSON(queueDomain: "demo.queue-it.net"))
        #expect(config.version == 7 && config.integrations.count == 3)
        #expect(config.match(GateRequest(url: "https://s/shop/cart"), urlWithoutToken: "https://s/shop/cart")?.name == "shop")
        #expect(config.match(GateRequest(url: "https://s/static/x"), urlWithoutToken: "https://s/static/x")?.name == "static")
        #expect(config.match(GateRequest(url: "https://s/home"), urlWithoutToken: "https://s/home") == nil)
        #expect(throws: QueueItIntegrationConfigError.missingVersion) { try QueueItIntegrationConfig(json: #"{"Integrations":[]}"#) }
        #expect(throws: QueueItIntegrationConfigError.self) { try QueueItIntegrationConfig(json: "not json") }
        // a Version that is not a whole number names the field (it read as "not valid JSON")
        #expect { try QueueItIntegrationConfig(json: #"{"Version": 3.5, "Integrations": []}"#) } throws: {
            "\($0)".contains("Version") && "\($0)".contains("whole number") && !"\($0)".contains("not valid JSON")
        }
        #expect(try QueueItIntegrationConfig(json: #"{"Version": 4.0, "Integrations": []}"#).version == 4)
        #expect(throws: QueueItIntegrationConfigError.missingField(integration: "q", field: "QueueDomain")) {
            try QueueItIntegrationConfig(
                json: #"{"Version":1,"Integrations":[{"Name":"q","ActionType":"Queue","EventId":"e","Triggers":[]}]}"#)
        }
        // a validity whose seconds overflow read every cookie as expired: refused, naming the field
        let fixture = QueueItGateFixture.configurationJSON(queueDomain: "demo.queue-it.net")
        for minutes in ["9223372036854775807", "\(QueueItIntegration.cookieValidityMinuteBound + 1)"] {
            let huge = fixture.replacingOccurrences(of: #""CookieValidityMinute": 10"#, with: #""CookieValidityMinute": \#(minutes)"#)
            #expect(huge != fixture)
            #expect { try QueueItIntegrationConfig(json: huge) } throws: { "\($0)".contains("CookieValidityMinute") }
        }
        let longest = fixture.replacingOccurrences(
            of: #""CookieValidityMinute": 10"#, with: #""CookieValidityMinute": \#(QueueItIntegration.cookieValidityMinuteBound)"#)
        #expect(try QueueItIntegrationConfig(json: longest).integrations.count == 3)
    }

    @Test func aNoTriggerRequestPassesUntouched() async throws {
        let gate = try QueueItGate(
            customerId: "demo", secretKey: "k",
            configuration: try QueueItIntegrationConfig(json: QueueItGateFixture.configurationJSON(queueDomain: "demo.queue-it.net")))
        let d = await gate.decide(GateRequest(url: "https://s/home?queueittoken=abc", headers: [GateHeader("Cookie", "x=1")]))
        #expect(d.verdict == .pass && d.reachesHandler && d.passHeaders.isEmpty)
    }
}
