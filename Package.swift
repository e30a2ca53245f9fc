// swift-tools-version:6.1
import PackageDescription

let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]

// External products, named once (also keeps the manifest quick to type-check).
let logging: Target.Dependency = .product(name: "Logging", package: "swift-log")
let nioCore: Target.Dependency = .product(name: "NIOCore", package: "swift-nio")
let nioPosix: Target.Dependency = .product(name: "NIOPosix", package: "swift-nio")
// NIO's lock (a pthread mutex): where ThreadSanitizer must see a lock, which it cannot for
// `Synchronization.Mutex` on Linux (README, "Sanitizers").
let nioConcurrencyHelpers: Target.Dependency = .product(name: "NIOConcurrencyHelpers", package: "swift-nio")
let httpTypes: Target.Dependency = .product(name: "HTTPTypes", package: "swift-http-types")
// The web server is only for the emulators (and the CLI and tests that serve them): behind the
// `Emulators` trait, on by default. An app that links only the SDK can depend on this package
// with `traits: []` and then resolves no web server at all (Scripts/check-library-shape).
let emulatorsTrait: Set<String> = ["Emulators"]
let serviceLifecycle: Target.Dependency = .product(
    name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: emulatorsTrait))
// The signals `waitingroom gate` watches itself (a second Ctrl-C cuts its drain short).
// The gate's servers (WaitingRoomGateProxy) run as services without the `Emulators` trait too.
let serviceLifecycleAlways: Target.Dependency = .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")
let unixSignals: Target.Dependency = .product(
    name: "UnixSignals", package: "swift-service-lifecycle", condition: .when(traits: emulatorsTrait))
let hummingbird: Target.Dependency = .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: emulatorsTrait))
let hummingbirdCore: Target.Dependency = .product(name: "HummingbirdCore", package: "hummingbird", condition: .when(traits: emulatorsTrait))
// Vapor is only for its gate middleware (WaitingRoomGateVapor) and that module's tests: behind the
// `Vapor` trait, on by default; `traits: []` resolves no Vapor either.
let vaporTrait: Set<String> = ["Vapor"]
let vapor: Target.Dependency = .product(name: "Vapor", package: "vapor", condition: .when(traits: vaporTrait))
let crypto: Target.Dependency = .product(name: "Crypto", package: "swift-crypto")
let cryptoExtras: Target.Dependency = .product(name: "_CryptoExtras", package: "swift-crypto")
let asyncHTTPClient: Target.Dependency = .product(name: "AsyncHTTPClient", package: "async-http-client")
let nioHTTP1: Target.Dependency = .product(name: "NIOHTTP1", package: "swift-nio")
let coreMetrics: Target.Dependency = .product(name: "CoreMetrics", package: "swift-metrics")
let tracing: Target.Dependency = .product(name: "Tracing", package: "swift-distributed-tracing")
let prometheus: Target.Dependency = .product(name: "Prometheus", package: "swift-prometheus")
let nioHTTPTypes: Target.Dependency = .product(name: "NIOHTTPTypes", package: "swift-nio-extras")

let package = Package(
    name: "WaitingRoom",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "WaitingRoom", targets: ["WaitingRoom"]),
        .library(name: "WaitingRoomHTTP", targets: ["WaitingRoomHTTP"]),
        .library(name: "WaitingRoomTesting", targets: ["WaitingRoomTesting"]),
        .library(name: "WaitingRoomConformance", targets: ["WaitingRoomConformance"]),
        .library(name: "NetFUNNEL", targets: ["NetFUNNEL"]),
        .library(name: "NetFUNNELEmulator", targets: ["NetFUNNELEmulator"]),
        .library(name: "QueueIt", targets: ["QueueIt"]),
        .library(name: "QueueItBrowser", targets: ["QueueItBrowser"]),
        .library(name: "QueueItEmulator", targets: ["QueueItEmulator"]),
        .library(name: "CrowdHandler", targets: ["CrowdHandler"]),
        .library(name: "Cloudflare", targets: ["Cloudflare"]),
        .library(name: "WaitingRoomVendors", targets: ["WaitingRoomVendors"]),
        .library(name: "WaitingRoomEmulators", targets: ["WaitingRoomEmulators"]),
        .library(name: "WaitingRoomLua", targets: ["WaitingRoomLua"]),
        .library(name: "WaitingRoomSQLite", targets: ["WaitingRoomSQLite"]),
        .library(name: "WaitingRoomPostgres", targets: ["WaitingRoomPostgres"]),
        .library(name: "WaitingRoomGate", targets: ["WaitingRoomGate"]),
        .library(name: "QueueItGateEngine", targets: ["QueueItGateEngine"]),
        .library(name: "CrowdHandlerGateEngine", targets: ["CrowdHandlerGateEngine"]),
        .library(name: "WaitingRoomGateProxy", targets: ["WaitingRoomGateProxy"]),
        .library(name: "WaitingRoomGateHummingbird", targets: ["WaitingRoomGateHummingbird"]),
        .library(name: "WaitingRoomGateVapor", targets: ["WaitingRoomGateVapor"]),
        .library(name: "WaitingRoomLoad", targets: ["WaitingRoomLoad"]),
        .executable(name: "waitingroom", targets: ["waitingroom"])
    ],
    traits: [
        .trait(name: "Emulators", description: "Every vendor's emulator, the CLI and their tests (Hummingbird)"),
        .trait(name: "Vapor", description: "The gate's Vapor 4 middleware (WaitingRoomGateVapor) and its tests"),
        .default(enabledTraits: ["Emulators", "Vapor"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/vapor/sqlite-nio.git", from: "1.13.2"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/vapor/vapor.git", from: "4.122.3")
    ],
    targets: [
        // MARK: core
        // No HTTP stack and no vendor: the `HTTPTransport` protocol lives here, its
        // AsyncHTTPClient implementation in WaitingRoomHTTP. The default transport's event loops
        // (or the core's own timer queue) wake the `SystemClock`'s timers, never the cooperative
        // pool; no event-loop implementation (NIOPosix) is linked here.
        .target(
            name: "WaitingRoom",
            dependencies: [logging, nioCore, coreMetrics, tracing, nioConcurrencyHelpers],
            swiftSettings: strict
        ),
        // The default transport (AsyncHTTPClient); a host app may bring its own instead.
        .target(
            name: "WaitingRoomHTTP",
            dependencies: [
                "WaitingRoom", logging, asyncHTTPClient, nioCore, nioHTTP1
            ],
            swiftSettings: strict
        ),
        // The test kit (virtual clock, thread helpers): tests only; nothing shipped imports it.
        .target(
            name: "WaitingRoomTesting",
            dependencies: [
                "WaitingRoom", nioConcurrencyHelpers
            ],
            swiftSettings: strict
        ),
        // The conformance suite every vendor runs in its tests; only tests import it.
        .target(
            name: "WaitingRoomConformance",
            dependencies: [
                "WaitingRoom", "WaitingRoomHTTP", "WaitingRoomTesting"
            ],
            swiftSettings: strict
        ),

        // The emulator kit: one fault value, parser and queue, the shared admin routes
        // (`EmulatedVendor`), response helpers and the dashboard's status types. Every vendor's
        // emulator is built on it; nothing an app links depends on it.
        .target(
            name: "WaitingRoomEmulatorKit",
            dependencies: [nioConcurrencyHelpers, "WaitingRoom", hummingbird, nioCore, httpTypes],
            swiftSettings: strict
        ),

        // A W3C WebDriver client and a `chromedriver` child process: Queue-it's headless-browser
        // queue-page driver, and the page tests.
        .target(
            name: "WebDriver",
            dependencies: ["WaitingRoom"],
            swiftSettings: strict
        ),

        // MARK: vendors
        // `scripted`: plays a given list of events (tests, flow authoring); no network.
        .target(
            name: "ScriptedVendor",
            dependencies: [
                "WaitingRoom"
            ],
            path: "Vendors/Scripted/Sources/ScriptedVendor",
            swiftSettings: strict
        ),
        .target(
            name: "NetFUNNEL",
            dependencies: [
                "WaitingRoom", logging
            ],
            path: "Vendors/NetFUNNEL/Sources/NetFUNNEL",
            swiftSettings: strict
        ),
        .target(
            name: "NetFUNNELEmulator",
            dependencies: [
                "WaitingRoomEmulatorKit",
                "WaitingRoom", httpTypes, serviceLifecycle, "NetFUNNEL", hummingbird, nioCore, logging, nioConcurrencyHelpers
            ],
            path: "Vendors/NetFUNNEL/Sources/NetFUNNELEmulator",
            swiftSettings: strict
        ),
        .target(
            name: "QueueIt",
            dependencies: [
                "WaitingRoom", crypto, logging, nioConcurrencyHelpers,
                // AES-256-CBC of enqueue-token payloads (`AES._CBC`).
                cryptoExtras
            ],
            path: "Vendors/QueueIt/Sources/QueueIt",
            swiftSettings: strict
        ),
        // Queue-it's headless-browser queue-page driver (chromium via `chromedriver`, a child
        // process): its own module, so an app that links Queue-it links no process spawner.
        .target(
            name: "QueueItBrowser",
            dependencies: ["QueueIt", "WaitingRoom", "WebDriver"],
            path: "Vendors/QueueIt/Sources/QueueItBrowser",
            swiftSettings: strict
        ),
        .target(
            name: "QueueItEmulator",
            dependencies: [
                "WaitingRoomEmulatorKit",
                "WaitingRoom", httpTypes, "QueueIt", hummingbird, nioCore, logging, serviceLifecycle, nioConcurrencyHelpers
            ],
            path: "Vendors/QueueIt/Sources/QueueItEmulator",
            swiftSettings: strict
        ),
        .target(
            name: "CrowdHandler",
            dependencies: [
                "WaitingRoom", logging,
                // SHA-256 of hybrid (local) signature validation.
                crypto
            ],
            path: "Vendors/CrowdHandler/Sources/CrowdHandler",
            swiftSettings: strict
        ),
        .target(
            name: "CrowdHandlerEmulator",
            dependencies: [
                "WaitingRoomEmulatorKit",
                "WaitingRoom", httpTypes, "CrowdHandler", hummingbird, nioCore, logging, nioConcurrencyHelpers
            ],
            path: "Vendors/CrowdHandler/Sources/CrowdHandlerEmulator",
            swiftSettings: strict
        ),
        // Cloudflare Waiting Room in JSON mode (no vendor SDK exists): a pure plugin.
        .target(
            name: "Cloudflare",
            dependencies: [
                "WaitingRoom", logging, nioConcurrencyHelpers
            ],
            path: "Vendors/Cloudflare/Sources/Cloudflare",
            swiftSettings: strict
        ),
        .target(
            name: "CloudflareEmulator",
            dependencies: [
                "WaitingRoomEmulatorKit",
                "WaitingRoom", httpTypes, "Cloudflare", hummingbird, nioCore, logging, nioConcurrencyHelpers
            ],
            path: "Vendors/Cloudflare/Sources/CloudflareEmulator",
            swiftSettings: strict
        ),
        // The one place that lists every vendor's client: `VendorRegistry.standard`. What an app
        // links: the core, the vendors' clients and the default transport; no server.
        .target(
            name: "WaitingRoomVendors",
            dependencies: [
                "WaitingRoom", "WaitingRoomHTTP", "ScriptedVendor", "NetFUNNEL", "QueueIt", "CrowdHandler", "Cloudflare", logging
            ],
            swiftSettings: strict
        ),
        // Every vendor's emulator on one server, with the dashboard: the CLI's `emulate`, `demo`
        // and `--emulator`, and tests. Apps that only wait in rooms never link it.
        .target(
            name: "WaitingRoomEmulators",
            dependencies: [
                "WaitingRoomEmulatorKit",
                logging, nioCore, "WaitingRoom", "WaitingRoomVendors", "NetFUNNEL", "NetFUNNELEmulator",
                "QueueIt", "QueueItEmulator", "CrowdHandler", "CrowdHandlerEmulator", "Cloudflare", "CloudflareEmulator", hummingbird,
                serviceLifecycle, hummingbirdCore, nioHTTPTypes, httpTypes, prometheus, nioConcurrencyHelpers
            ],
            swiftSettings: strict
        ),

        // The gate that protects a server, vendor-neutral and free of any web framework: the
        // request and decision types, the `GateEngine` protocol, one mapping of a decision to an
        // HTTP answer, the auth-subrequest routes and the credential ledger. The engines live in
        // their vendors' folders; each framework's thin adapter is its own module
        // (Scripts/check-imports keeps vendors out of it).
        .target(
            name: "WaitingRoomGate",
            dependencies: [
                "WaitingRoom", logging, nioConcurrencyHelpers, coreMetrics
            ],
            swiftSettings: strict
        ),
        // Queue-it's KnownUser flow as a gate engine (triggers, integration configuration).
        .target(
            name: "QueueItGateEngine",
            dependencies: [
                "WaitingRoomGate", "WaitingRoom", "QueueIt", logging, nioConcurrencyHelpers, crypto
            ],
            path: "Vendors/QueueIt/Sources/QueueItGateEngine",
            swiftSettings: strict
        ),
        // CrowdHandler's full and hybrid checks as a gate engine.
        .target(
            name: "CrowdHandlerGateEngine",
            dependencies: [
                "WaitingRoomGate", "WaitingRoom", "CrowdHandler", logging
            ],
            path: "Vendors/CrowdHandler/Sources/CrowdHandlerGateEngine",
            swiftSettings: strict
        ),
        // The gate's own servers on SwiftNIO: the reverse proxy (`GateProxyServer`) and the
        // auth-subrequest server for nginx `auth_request`, Caddy `forward_auth`, Traefik
        // `ForwardAuth`, Envoy `ext_authz` (`GateAuthServer`). Vendor-neutral: any `GateEngine`.
        .target(
            name: "WaitingRoomGateProxy",
            dependencies: [
                "WaitingRoomGate", "WaitingRoom", logging, nioCore, nioPosix, nioHTTP1, nioConcurrencyHelpers, serviceLifecycleAlways
            ],
            swiftSettings: strict
        ),
        // The Hummingbird 2 middleware (`GateMiddleware`): the CLI's `waitingroom gate` and tests.
        .target(
            name: "WaitingRoomGateHummingbird",
            dependencies: [
                "WaitingRoomGate", hummingbird, httpTypes, logging
            ],
            swiftSettings: strict
        ),
        // The Vapor 4 middleware (`VaporGateMiddleware`); its sources are `#if Vapor`, so the
        // package still builds with the trait off.
        .target(
            name: "WaitingRoomGateVapor",
            dependencies: [
                "WaitingRoomGate", vapor, logging
            ],
            swiftSettings: strict
        ),

        // MARK: durable stores
        // The embedded store (sqlite-nio, its own SQLite build): one file in WAL mode; the
        // default when an app or the CLI asks for durability (`--state PATH`).
        .target(
            name: "WaitingRoomSQLite",
            dependencies: ["WaitingRoom", logging, nioCore, nioPosix, .product(name: "SQLiteNIO", package: "sqlite-nio")],
            swiftSettings: strict
        ),
        // The shared store (postgres-nio): several instances of an app on one database.
        .target(
            name: "WaitingRoomPostgres",
            dependencies: ["WaitingRoom", logging, nioCore, nioPosix, .product(name: "PostgresNIO", package: "postgres-nio")],
            swiftSettings: strict
        ),

        // MARK: Lua host
        // Debian's liblua5.4-dev (Scripts/setup). No pkgConfig: its `-L/usr/lib/x86_64-linux-gnu`
        // would come first in the link and keep the release binary from linking the static
        // archive (Scripts/static-link/README.md); the header finds `lua5.4/lua.h` itself.
        .systemLibrary(name: "CLua"),
        .target(name: "CLuaShim", dependencies: ["CLua"]),
        // The C allocator's bytes in use (glibc `mallinfo2`): `bench state`'s memory per waiting user.
        .target(name: "CHeapInUse"),
        .target(
            name: "WaitingRoomLua",
            dependencies: [
                "CLua", "CLuaShim", "WaitingRoom", logging
            ],
            swiftSettings: strict
        ),

        // MARK: load driver and benchmarks
        // The load driver (`waitingroom load`): virtual users, their figures, fairness, and the
        // text, JSON and HTML reports, as values an app or a test can run and read.
        .target(
            name: "WaitingRoomLoad",
            dependencies: ["WaitingRoom", "WaitingRoomEmulatorKit", "WaitingRoomEmulators", nioConcurrencyHelpers],
            swiftSettings: strict
        ),
        // The benchmark harness (`waitingroom bench`): no product, only the CLI and its tests use it.
        // Test and benchmark helpers (not a product: nothing an app links): a throwaway
        // PostgreSQL server, the stores' write benchmarks and the Lua flow benchmarks, used by
        // `waitingroom bench` and by the tests.
        .target(
            name: "WaitingRoomBenchSupport",
            dependencies: [
                "WaitingRoom", "WaitingRoomLua", "WaitingRoomSQLite", "WaitingRoomPostgres", "CLua", "CLuaShim", logging,
                // its free loopback port (LoopbackPort)
                "WebDriver",
                .product(name: "SQLiteNIO", package: "sqlite-nio"), .product(name: "PostgresNIO", package: "postgres-nio")
            ],
            swiftSettings: strict
        ),
        .target(
            name: "WaitingRoomBench",
            dependencies: [
                "WaitingRoom", "WaitingRoomLoad", "WaitingRoomHTTP", "WaitingRoomVendors", "WaitingRoomEmulators", "ScriptedVendor",
                "NetFUNNEL", "QueueIt", "CrowdHandler", "QueueItGateEngine", "CrowdHandlerGateEngine", "WaitingRoomGate",
                "WaitingRoomGateProxy", "WaitingRoomLua", "WaitingRoomSQLite", "WaitingRoomPostgres", "WaitingRoomBenchSupport",
                "CHeapInUse", "WebDriver",
                prometheus, hummingbird, nioConcurrencyHelpers, logging, nioCore,
                // `bench queueit`'s baseline: a bare HMAC-SHA256, keyed per call
                crypto
            ],
            swiftSettings: strict
        ),

        // MARK: gate server and metrics endpoint
        // `waitingroom gate` running: the vendors' engines built from its settings (Queue-it's
        // configuration kept current), the emulator and the ledger when asked, and the gate's
        // servers until a signal. No product: only the CLI uses it; it may name vendors, so
        // WaitingRoomGate and WaitingRoomGateProxy stay vendor-neutral (Scripts/check-imports).
        .target(
            name: "WaitingRoomGateServer",
            dependencies: [
                "WaitingRoom", "WaitingRoomHTTP", "WaitingRoomVendors", "WaitingRoomEmulators", "WaitingRoomGate", "WaitingRoomGateProxy",
                "QueueIt", "QueueItGateEngine", "CrowdHandler", "CrowdHandlerGateEngine", logging, nioCore, nioPosix, serviceLifecycle,
                unixSignals
            ],
            swiftSettings: strict
        ),
        // `--metrics-port`: the SDK's swift-metrics served as Prometheus text on the emulators'
        // Hummingbird setup. No product: only the CLI uses it.
        .target(
            name: "WaitingRoomMetricsEndpoint",
            dependencies: ["WaitingRoom", "WaitingRoomEmulators", prometheus, coreMetrics, hummingbird, logging, nioCore],
            swiftSettings: strict
        ),

        // MARK: CLI
        // Debian's libedit-dev (Scripts/setup); no pkgConfig, like CLua.
        .systemLibrary(name: "CEditLine"),
        // Commands, flags, help and output only: the work is in the libraries.
        .target(
            name: "WaitingRoomCLI",
            dependencies: [
                "WaitingRoomEmulatorKit",
                nioCore, nioPosix, "WaitingRoom", "WaitingRoomHTTP", "WaitingRoomLua", "WaitingRoomVendors",
                "WaitingRoomEmulators", "ScriptedVendor", "NetFUNNEL", "NetFUNNELEmulator", "QueueIt",
                "QueueItEmulator", "CrowdHandler", "CrowdHandlerEmulator", "Cloudflare", "CloudflareEmulator", "CEditLine", logging,
                "WaitingRoomSQLite", "WaitingRoomPostgres", prometheus, coreMetrics, hummingbird,
                "WaitingRoomGate", "WaitingRoomGateProxy", "QueueItGateEngine", "CrowdHandlerGateEngine", nioHTTP1, serviceLifecycle,
                unixSignals,
                "WaitingRoomLoad", "WaitingRoomBench", "WaitingRoomGateServer", "WaitingRoomMetricsEndpoint"
            ],
            swiftSettings: strict
        ),
        // Release builds link the Swift runtime and Foundation in and are position-dependent:
        // no shared Swift libraries to load and no load-time relocation of the binary's ~130k
        // pointers, whose copy-on-write faults were most of `--help`'s start-up (16.6 → 6–9 ms;
        // `bench/startup.sh`). Debug builds (the tests) link as usual. Foundation's static
        // archives are named in one group because our objects are compiled against the shared
        // Foundation modules, whose autolink entries do not name CoreFoundation or the ICU data.
        // `--no-export-dynamic`: the executable exported all its ~44k symbols, so every start
        // paid for them: the runtime's one `dladdr` at load (`_dl_addr` scanned the table: 7 % of
        // `--help`), the loader's lookups for the C libraries, and ~4 MB of symbol tables
        // mapped in (`--help` 6.0–6.2× → 4.6–5.3× lua5.4; `load --users 10000` peak 155 → 150 MiB).
        // Nothing looks the executable's symbols up by name: backtraces read `.symtab`. (NIO's
        // event-loop takeover for `emulate` looks up `swift_task_enqueueGlobal_hook` with
        // `dlsym`; the static Concurrency library keeps that symbol local, so in this binary the
        // takeover is declined either way and `emulate` runs on the default executor:
        // `bench emulators` measured the same ratios against nginx for both links.)
        // The C libraries are static too (libstdc++, Lua, libedit with libtinfo, libbsd and
        // libmd, zlib): loading libstdc++.so alone cost ~1,700 symbol lookups at every start,
        // and each shared library its mapping and page faults (`--help` 3.9–4.5 → 2.4–2.5 ms,
        // 345 → 251 page faults; lua5.4 1.4 ms). `Scripts/static-link` holds empty linker
        // scripts named like those shared libraries; searched first (`-L`), they hide the `.so`
        // files from the `-lstdc++ -llua5.4 -ledit -lz` that the toolchain and the system-library
        // targets add, and the archives are named here, in the group, so Foundation's ICU finds
        // libstdc++ too. Only the libc, libm and libgcc_s stay shared.
        .executableTarget(
            name: "waitingroom",
            dependencies: [
                "WaitingRoomCLI", "QueueItBrowser"
            ],
            swiftSettings: strict,
            linkerSettings: [
                .unsafeFlags(
                    [
                        "-static-stdlib", "-Xclang-linker", "-no-pie", "-L", Context.packageDirectory + "/Scripts/static-link", "-Xlinker",
                        "--start-group", "-lFoundation", "-lFoundationEssentials", "-lFoundationInternationalization", "-lCoreFoundation",
                        "-l_FoundationICU", "-l_FoundationCShims", "-l_FoundationCollections", "-l:libstdc++.a", "-l:liblua5.4.a",
                        "-l:libedit.a", "-l:libtinfo.a", "-l:libbsd.a", "-l:libmd.a", "-l:libz.a", "-Xlinker", "--end-group", "-Xlinker",
                        "--no-export-dynamic"
                    ], .when(platforms: [.linux], configuration: .release))
            ]
        ),

        // MARK: tests
        .testTarget(
            name: "WaitingRoomTests",
            dependencies: [
                logging, coreMetrics, tracing,
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                "WaitingRoom", "WaitingRoomHTTP", "ScriptedVendor", "WaitingRoomTesting",
                "WaitingRoomConformance", nioCore, nioPosix,
                // SpawnedProcess (posix_spawn) for the child test runs
                "WebDriver"
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "NetFUNNELTests",
            dependencies: [
                "WaitingRoom", "NetFUNNEL", "NetFUNNELEmulator", "WaitingRoomHTTP", "WaitingRoomTesting",
                "WaitingRoomConformance"
            ],
            path: "Vendors/NetFUNNEL/Tests/NetFUNNELTests",
            swiftSettings: strict
        ),
        .testTarget(
            name: "QueueItTests",
            dependencies: [
                "WaitingRoom", logging, "QueueIt", "QueueItBrowser", "QueueItEmulator", "WaitingRoomHTTP", "WaitingRoomTesting",
                "WaitingRoomConformance", "WaitingRoomEmulators", hummingbird, serviceLifecycle
            ],
            path: "Vendors/QueueIt/Tests/QueueItTests",
            swiftSettings: strict
        ),
        .testTarget(
            name: "CrowdHandlerTests",
            dependencies: [
                "WaitingRoom", logging, "CrowdHandler", "CrowdHandlerEmulator", "WaitingRoomHTTP",
                "WaitingRoomTesting", "WaitingRoomConformance", "WaitingRoomEmulators", hummingbird, serviceLifecycle
            ],
            path: "Vendors/CrowdHandler/Tests/CrowdHandlerTests",
            swiftSettings: strict
        ),
        .testTarget(
            name: "CloudflareTests",
            dependencies: [
                "WaitingRoom", logging, "Cloudflare", "CloudflareEmulator", "WaitingRoomEmulatorKit", "WaitingRoomEmulators",
                "WaitingRoomHTTP",
                "WaitingRoomTesting", "WaitingRoomConformance", hummingbird, serviceLifecycle, nioCore,
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                // SpawnedProcess: runs Cloudflare's Python SDK against the emulator (ManagementSDKTests)
                "WebDriver"
            ],
            path: "Vendors/Cloudflare/Tests/CloudflareTests",
            swiftSettings: strict
        ),
        .testTarget(
            name: "WaitingRoomObservabilityTests",
            dependencies: [
                "WaitingRoom", "WaitingRoomVendors", "WaitingRoomEmulators", "WaitingRoomHTTP", "NetFUNNEL", "NetFUNNELEmulator",
                coreMetrics, tracing,
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing")
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "WaitingRoomSQLiteTests",
            dependencies: [
                "WaitingRoomBenchSupport",
                "WaitingRoom", "WaitingRoomSQLite", "WaitingRoomTesting", "WaitingRoomConformance", nioPosix,
                .product(name: "SQLiteNIO", package: "sqlite-nio")
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "WaitingRoomPostgresTests",
            dependencies: [
                "WaitingRoomBenchSupport",
                "WaitingRoom", "WaitingRoomPostgres", "WaitingRoomTesting", "WaitingRoomConformance", logging,
                "NetFUNNEL", "NetFUNNELEmulator", "WaitingRoomHTTP"
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "WaitingRoomLuaTests",
            dependencies: [
                "WaitingRoomBenchSupport",
                "WaitingRoom", "NetFUNNELEmulator", "QueueItEmulator", "WaitingRoomLua", "WaitingRoomVendors",
                "WaitingRoomHTTP", "ScriptedVendor", "WaitingRoomTesting", "NetFUNNEL", "QueueIt",
                "CrowdHandler", logging
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "WaitingRoomEmulatorKitTests",
            dependencies: [
                "WaitingRoom", "WaitingRoomEmulatorKit", "WaitingRoomEmulators", "WaitingRoomHTTP", "WaitingRoomVendors", "WebDriver"
            ],
            swiftSettings: strict
        ),
        // What both gate test targets share (the Queue-it fixture, the upstream counter, the
        // emulators' admin routes): tests only, no product, nothing shipped imports it.
        .target(
            name: "WaitingRoomGateTestSupport",
            dependencies: [
                "WaitingRoomGate", "QueueItGateEngine", "WaitingRoom", "QueueIt", "QueueItBrowser", "WaitingRoomEmulators",
                "WaitingRoomHTTP", nioConcurrencyHelpers,
                "WaitingRoomTesting", "WebDriver", "WaitingRoomGateProxy", logging, nioPosix, serviceLifecycle, hummingbird
            ],
            path: "Tests/WaitingRoomGateTestSupport",
            swiftSettings: strict
        ),
        .testTarget(
            name: "WaitingRoomGateTests",
            dependencies: [
                "WaitingRoomGateTestSupport", "WaitingRoomGate", "QueueItGateEngine", "CrowdHandlerGateEngine",
                "WaitingRoomGateHummingbird", "WaitingRoom", "QueueIt", "QueueItEmulator", "CrowdHandler", "CrowdHandlerEmulator",
                "WaitingRoomEmulators", "WaitingRoomHTTP", "WaitingRoomTesting", "WebDriver", "QueueItBrowser", hummingbird,
                serviceLifecycle,
                .product(name: "HummingbirdTesting", package: "hummingbird", condition: .when(traits: emulatorsTrait))
            ],
            swiftSettings: strict
        ),
        // The gate attacked from outside: raw bytes over loopback sockets to the reverse proxy
        // (the real binary), the Hummingbird middleware and the Vapor one (`#if Vapor`), each in
        // front of an app that records what reached it; the attack classes and a seeded fuzz run.
        .testTarget(
            name: "WaitingRoomGateSecurityTests",
            dependencies: [
                "WaitingRoomGateTestSupport", "WaitingRoomGate", "QueueItGateEngine", "WaitingRoomGateHummingbird", "WaitingRoomGateVapor",
                "WaitingRoom", "QueueIt",
                "WaitingRoomGateProxy",
                "WaitingRoomTesting", "WebDriver", hummingbird, serviceLifecycle, vapor, nioConcurrencyHelpers
            ],
            swiftSettings: strict
        ),
        // The Vapor middleware against the Hummingbird one, both over loopback in front of the
        // emulators (`#if Vapor`: empty with the trait off).
        .testTarget(
            name: "WaitingRoomGateVaporTests",
            dependencies: [
                "WaitingRoomGateTestSupport", "WaitingRoomGate", "QueueItGateEngine", "CrowdHandlerGateEngine", "WaitingRoomGateVapor",
                "WaitingRoomGateHummingbird", "WaitingRoom", "QueueIt", "CrowdHandler",
                "WaitingRoomGateProxy",
                "WaitingRoomEmulators", "WaitingRoomHTTP", hummingbird, vapor,
                .product(name: "HummingbirdTesting", package: "hummingbird", condition: .when(traits: emulatorsTrait))
            ],
            swiftSettings: strict
        ),
        // The gate's own servers in-process: the reverse proxy's parts, and the auth-subrequest
        // server behind Debian's nginx and Caddy (real processes the tests start on free ports
        // with the shipped deploy/ files), in front of the emulators and a recording app.
        .testTarget(
            name: "WaitingRoomGateProxyTests",
            dependencies: [
                "WaitingRoomBenchSupport",
                "WaitingRoomGateTestSupport", "WaitingRoomGateProxy", "WaitingRoomGate", "QueueItGateEngine", "CrowdHandlerGateEngine",
                "WaitingRoom", "QueueIt", "CrowdHandler", "WaitingRoomEmulators", "WaitingRoomHTTP", "WaitingRoomTesting", "WebDriver",
                "QueueItBrowser",
                "WaitingRoomGateHummingbird", "WaitingRoomGateVapor", "WaitingRoomSQLite", "WaitingRoomPostgres",
                nioCore, nioPosix, nioHTTP1, nioConcurrencyHelpers, logging, hummingbird, vapor, serviceLifecycle
            ],
            swiftSettings: strict
        ),
        // The load driver's figures and runs against the emulators, through its API.
        .testTarget(
            name: "WaitingRoomLoadTests",
            dependencies: [
                "WaitingRoom", "WaitingRoomLoad", "WaitingRoomEmulatorKit", "WaitingRoomEmulators", "WaitingRoomVendors", "WaitingRoomHTTP"
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "WaitingRoomCLITests",
            dependencies: [
                "WebDriver", "QueueItBrowser", "WaitingRoomEmulatorKit", "WaitingRoomBench", "WaitingRoomLoad",
                "WaitingRoomMetricsEndpoint",
                "WaitingRoom", "WaitingRoomCLI", "WaitingRoomVendors", "WaitingRoomEmulators",
                "WaitingRoomTesting", "WaitingRoomHTTP", "NetFUNNELEmulator", "QueueIt", "QueueItEmulator",
                "CrowdHandler", "CrowdHandlerEmulator", "WaitingRoomGateTestSupport", hummingbird, serviceLifecycle, nioConcurrencyHelpers,
                nioCore
            ],
            swiftSettings: strict
        )
    ]
)
