import Foundation
import Testing
import WaitingRoom
import WaitingRoomHTTP
import WaitingRoomTesting

@testable import NetFUNNEL

@Suite("NetFUNNEL configuration")
struct ConfigurationTests {
    func field(of json: String) -> String? {
        do {
            _ = try NetFUNNELConfiguration(json: try JSONValue.parse(json))
            return nil
        } catch {
            return (error as? WaitingRoomError)?.field
        }
    }

    @Test func readsEveryOptionByTheAgentsName() throws {
        let config = try NetFUNNELConfiguration(
            json: try JSONValue.parse(
                """
                {"clientId": "stclab-0000", "serverUrl": "https://nf.example.test", "errorUrl": "https://nf.example.test/error",
                 "networkTimeout": 5000, "retryCount": 2, "printLog": true, "useNetfunnelTemplate": false,
                 "errorBypass": true, "userId": "user_67890", "useNetworkRecoveryMode": true}
                """))
        #expect(
            config
                == NetFUNNELConfiguration(
                    clientId: "stclab-0000", serverUrl: "https://nf.example.test", errorUrl: "https://nf.example.test/error",
                    networkTimeout: 5000, retryCount: 2, printLog: true, useNetfunnelTemplate: false, errorBypass: true,
                    userId: "user_67890", useNetworkRecoveryMode: true))
        #expect(NetFUNNELConfiguration.vendorID == "netfunnel")
        let defaults = try NetFUNNELConfiguration(json: .object([:]))
        #expect(defaults.networkTimeout == 3000 && defaults.retryCount == 0 && defaults.useNetfunnelTemplate)
        #expect(!defaults.errorBypass && !defaults.useNetworkRecoveryMode && !defaults.printLog)
        #expect(defaults.isBypassMode)
    }

    @Test func errorsNameTheFieldAndRange() throws {
        #expect(field(of: #"{"networkTimeout": 99}"#) == "netfunnel.networkTimeout")
        #expect(field(of: #"{"networkTimeout": 10001}"#) == "netfunnel.networkTimeout")
        #expect(field(of: #"{"retryCount": 11}"#) == "netfunnel.retryCount")
        #expect(field(of: #"{"retryCount": -1}"#) == "netfunnel.retryCount")
        #expect(field(of: #"{"printLog": "yes"}"#) == "netfunnel.printLog")
        #expect(field(of: #"{"clientID": "x"}"#) == "netfunnel.clientID")
        #expect(field(of: #"{"clientId": "bad host/../x"}"#) == "netfunnel.clientId")
        #expect(field(of: #"{"serverUrl": "http://nf.example.test"}"#) == "netfunnel.serverUrl")
        #expect(field(of: #"{"serverUrl": "ftp://nf.example.test"}"#) == "netfunnel.serverUrl")
        #expect(field(of: #"{"errorUrl": "not a url"}"#) == "netfunnel.errorUrl")
        #expect(field(of: #"{"serverUrl": "http://127.0.0.1:8080"}"#) == nil)
        #expect(field(of: #"{"serverUrl": "http://localhost:8080"}"#) == nil)
        do {
            _ = try NetFUNNELConfiguration(json: try JSONValue.parse(#"{"networkTimeout": 50}"#))
        } catch let error as WaitingRoomError {
            #expect(error.message.contains("100") && error.message.contains("10000"))
            #expect(error.kind == .invalidConfiguration)
        }
        #expect(throws: WaitingRoomError.self) { try RetryPolicy.netFunnel(networkTimeout: .milliseconds(50), retryCount: 0) }
        let policy = try RetryPolicy.netFunnel(networkTimeout: .milliseconds(3000), retryCount: 3)
        #expect(policy.maxAttempts == 4 && policy.pacing == .fixedSlots && policy.attemptTimeout == .milliseconds(3000))
    }

    @Test func serverURLIsDerivedFromClientId() throws {
        let config = NetFUNNELConfiguration(clientId: "stclab-0000")
        #expect(try config.resolvedServerURL()?.absoluteString == "https://stclab-0000.netfunnel.stclab.com")
        #expect(config.derivedWaitingRoomPageURL == "https://agent-lib.stclab.com/vwr-page/stclab-0000.netfunnel/index.html")
        #expect(!config.isBypassMode)
        #expect(try NetFUNNELConfiguration().resolvedServerURL() == nil)
    }

    @Test func nodeAffinityOnlyWithinTheConfiguredDomain() throws {
        let environment = ProviderEnvironment(transport: AsyncHTTPTransport.shared, clock: VirtualClock(autoAdvance: true))
        let client = try NetFUNNELClient(
            configuration: .init(clientId: "stclab-0000"), serverURL: URL(string: "https://stclab-0000.netfunnel.stclab.com")!,
            environment: environment)
        #expect(client.isAllowedHost("stclab-0000.netfunnel.stclab.com"))
        #expect(client.isAllowedHost("node3.netfunnel.stclab.com"))
        #expect(!client.isAllowedHost("evil.example.test"))
        #expect(!client.isAllowedHost("netfunnel.stclab.com.evil.test"))
        #expect(!client.isAllowedHost("10.0.0.7"))
        let reply = try NetFUNNELReply.parse("200:key=K&ip=node3.netfunnel.stclab.com&port=8443")
        #expect(client.allowedNode(from: reply) == NetFUNNELNode(host: "node3.netfunnel.stclab.com", port: 8443))
        #expect(
            client.baseURL(for: NetFUNNELNode(host: "node3.netfunnel.stclab.com", port: 443)).absoluteString
                == "https://node3.netfunnel.stclab.com")
        let loopback = try NetFUNNELClient(
            configuration: .init(serverUrl: "http://127.0.0.1:9"), serverURL: URL(string: "http://127.0.0.1:9")!,
            environment: environment)
        #expect(loopback.isAllowedHost("127.0.0.1"))
        #expect(!loopback.isAllowedHost("127.0.0.2"))
        #expect(!loopback.isAllowedHost("localhost"))
    }

    @Test func providerRefusesAnEmptyRoom() throws {
        let provider = try NetFUNNELProvider(
            configuration: .init(serverUrl: "http://127.0.0.1:9"),
            environment: ProviderEnvironment(transport: AsyncHTTPTransport.shared, clock: VirtualClock(autoAdvance: true)))
        #expect(throws: WaitingRoomError.self) { try provider.enqueue(Entry(room: RoomKey(scope: "", room: "s"))) }
    }

    @Test func registryStyleConstruction() throws {
        let provider = try NetFUNNELConfiguration(json: try JSONValue.parse(#"{"serverUrl": "http://127.0.0.1:9"}"#))
            .makeProvider(environment: ProviderEnvironment(transport: AsyncHTTPTransport.shared, clock: VirtualClock(autoAdvance: true)))
        #expect(provider.vendorID == "netfunnel")
    }
}
