import Foundation
import Logging
import QueueItGateEngine
import UnixSignals
import WaitingRoom
import WaitingRoomEmulators
import WaitingRoomGate
import WaitingRoomHTTP

/// Queue-it's configuration kept current while `waitingroom gate` runs (issue 49 §6): the
/// first one (from `--config-url`, else `--config`, else the emulator's default), then
/// `--config-url` pulled every `--config-interval`, `--config` read again on SIGHUP, and
/// pushes on the auth server's `PUT /.waitingroom/configuration`; each built into a new
/// ``QueueItGate`` and swapped in by the ``GateConfigurationReloader``.
struct GateLiveConfiguration: Sendable {
    let reloader: GateConfigurationReloader
    let builder: GateEngineFactory.QueueItBuilder
    let source: QueueItIntegrationConfigSource?
    let file: String?
    let interval: Duration

    /// Loads the first configuration and builds its gate.
    static func start(
        _ settings: GateServerSettings, emulator: (suite: EmulatorSuite, server: EmulatorServer)?, ledger: GateCredentialLedger?,
        output: GateServerOutput, makeLogger: (String) -> Logger
    ) async throws -> GateLiveConfiguration {
        guard settings.config != nil || settings.configURL != nil || emulator != nil else {
            throw WaitingRoomError.invalidConfiguration(
                field: "--config", "give --config FILE (Queue-it's integration configuration), --config-url or --emulator")
        }
        let builder = try GateEngineFactory.queueItBuilder(
            customer: settings.customer, secretKey: ProcessInfo.processInfo.environment["QUEUEIT_SECRET_KEY"],
            sessionMemo: settings.sessionMemo, checksOptions: settings.checkOptions, cookieSameSite: settings.cookieSameSite,
            ledger: ledger, emulator: emulator, logger: makeLogger("waitingroom.gate.queueit"))
        let source = settings.configURL.map {
            QueueItIntegrationConfigSource(
                customerId: builder.customer, url: $0, apiKey: ProcessInfo.processInfo.environment["QUEUEIT_API_KEY"],
                transport: AsyncHTTPTransport.shared)
        }
        var first: QueueItIntegrationConfig?
        if let source {
            do {
                first = try await source.download()
            } catch {
                guard settings.config != nil else {
                    throw WaitingRoomError(.unavailable, vendor: "queueit", message: "--config-url: \(error)", field: "--config-url")
                }
                output.error("waitingroom gate: --config-url: \(error); starting with --config \(settings.config ?? "")")
            }
        }
        if first == nil {
            if let file = settings.config {
                first = try GateEngineFactory.readIntegrationConfig(file)
            } else if let emulator {
                first = try QueueItIntegrationConfig(json: EmulatorGateIntegration.queueItJSON(queueDomain: emulator.server.baseURL))
            } else {
                throw WaitingRoomError.invalidConfiguration(
                    field: "--config", "give --config FILE (Queue-it's integration configuration), --config-url or --emulator")
            }
        }
        guard let first else { throw WaitingRoomError.invalidConfiguration(field: "--config", "no integration configuration") }
        let reloader = GateConfigurationReloader(
            initial: .init(engine: try builder.build(first), version: first.version),
            logger: makeLogger("waitingroom.gate.config"))
        return GateLiveConfiguration(
            reloader: reloader, builder: builder, source: source, file: settings.config,
            interval: .milliseconds(Int64(settings.configInterval * 1000)))
    }

    /// The push route's answer: 200 when the configuration is in force; 403 for a wrong
    /// hash; 400 for a body that is not a push or a configuration (the one in force stays).
    var push: @Sendable ([UInt8]) async -> GateResponse {
        { [reloader, builder] body in
            do {
                let configuration = try QueueItIntegrationConfigSource.pushed(body, secretKey: builder.secretKey)
                reloader.install(.init(engine: try builder.build(configuration), version: configuration.version), source: "push")
                return GateResponse(
                    status: 200, headers: [GateHeader("Content-Type", "text/plain; charset=utf-8")],
                    body: "configuration version \(configuration.version) in force\n")
            } catch let failure as QueueItIntegrationConfigSource.Failure {
                reloader.failed(failure, source: "push")
                return .refusal(failure == .wrongHash ? 403 : 400, failure.description)
            } catch {
                reloader.failed(error, source: "push")
                return .refusal(400, "\(error)")
            }
        }
    }

    /// Pulls `--config-url` and watches SIGHUP until cancelled.
    func run(output: GateServerOutput) async {
        await withTaskGroup(of: Void.self) { group in
            if let source {
                let builder = self.builder
                group.addTask {
                    await reloader.pull(every: interval) {
                        let configuration = try await source.download()
                        return .init(engine: try builder.build(configuration), version: configuration.version)
                    }
                }
            }
            if let file {
                let reloader = self.reloader
                let builder = self.builder
                group.addTask {
                    let hangups = await UnixSignalsSequence(trapping: .sighup)
                    for await _ in hangups {
                        let loaded = await reloader.reload(source: "file") {
                            let configuration = try GateEngineFactory.readIntegrationConfig(file)
                            return .init(engine: try builder.build(configuration), version: configuration.version)
                        }
                        output.error(
                            "waitingroom gate: SIGHUP: \(file) \(loaded ? "in force (version \(reloader.version))" : "not loaded; the configuration in force stays")"
                        )
                    }
                }
            }
            await group.waitForAll()
        }
    }
}
