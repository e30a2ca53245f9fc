import NIOCore
import PostgresNIO
import WaitingRoom

extension PostgresConnectionString {
    /// The TLS settings for `tlsMode` (libpq's meaning: `prefer` and `require` do not check
    /// the certificate, `verify-ca` checks the chain, `verify-full` the chain and the name).
    private var tlsConfiguration: TLSConfiguration? {
        var tls = TLSConfiguration.makeClientConfiguration()
        switch tlsMode {
        case .disable, .allow: return nil
        case .prefer, .require: tls.certificateVerification = .none
        case .verifyCA: tls.certificateVerification = .noHostnameVerification
        case .verifyFull: tls.certificateVerification = .fullVerification
        }
        return tls
    }

    /// The pool's configuration (at most `maximumConnections` connections).
    func clientConfiguration(maximumConnections: Int) -> PostgresClient.Configuration {
        var configuration: PostgresClient.Configuration
        if let unixSocketPath {
            configuration = .init(unixSocketPath: unixSocketPath, username: username, password: password, database: database)
        } else {
            let tls: PostgresClient.Configuration.TLS
            switch (tlsMode, tlsConfiguration) {
            case (_, nil): tls = .disable
            case (.prefer, let settings?): tls = .prefer(settings)
            case (_, let settings?): tls = .require(settings)
            }
            configuration = .init(
                host: host ?? "localhost", port: port, username: username, password: password, database: database, tls: tls)
        }
        configuration.options.connectTimeout = connectTimeout
        configuration.options.maximumConnections = maximumConnections
        configuration.options.minimumConnections = 0
        if let applicationName { configuration.options.additionalStartupParameters = [("application_name", applicationName)] }
        return configuration
    }

    /// The configuration of one connection outside the pool (the first one, which checks the
    /// server and prepares the tables).
    func connectionConfiguration() throws -> PostgresConnection.Configuration {
        var configuration: PostgresConnection.Configuration
        if let unixSocketPath {
            configuration = .init(unixSocketPath: unixSocketPath, username: username, password: password, database: database)
        } else {
            let tls: PostgresConnection.Configuration.TLS
            switch (tlsMode, tlsConfiguration) {
            case (_, nil): tls = .disable
            case (.prefer, let settings?): tls = .prefer(try NIOSSLContext(configuration: settings))
            case (_, let settings?): tls = .require(try NIOSSLContext(configuration: settings))
            }
            configuration = .init(
                host: host ?? "localhost", port: port, username: username, password: password, database: database, tls: tls)
        }
        // A backstop a second past the store's own limit, which bounds connecting and preparing
        // the tables together and says so (PostgresNIO's would only say "Connect timeout").
        configuration.options.connectTimeout = TimeAmount.nanoseconds(Int64((connectTimeout.seconds + 1) * 1e9))
        if let applicationName { configuration.options.additionalStartupParameters = [("application_name", applicationName)] }
        return configuration
    }
}
