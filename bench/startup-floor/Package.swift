// swift-tools-version:6.0
// A minimal ArgumentParser tool (three subcommands, no Foundation of its own), linked the way
// Package.swift links the release `waitingroom`: the start-up floor of an ArgumentParser command
// line (`waitingroom` used ArgumentParser until its own parser replaced it).
// Built and timed by bench/startup-floor.sh; not part of the WaitingRoom package.
import PackageDescription

let package = Package(
    name: "startup-floor",
    dependencies: [.package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2")],
    targets: [
        .executableTarget(
            name: "floor-tool",
            dependencies: [.product(name: "ArgumentParser", package: "swift-argument-parser")],
            linkerSettings: [
                .unsafeFlags(
                    [
                        "-static-stdlib", "-Xclang-linker", "-no-pie", "-Xlinker", "--start-group", "-lFoundationEssentials",
                        "-l_FoundationCShims", "-l_FoundationCollections", "-lswiftSynchronization", "-Xlinker", "--end-group", "-Xlinker",
                        "--no-export-dynamic"
                    ], .when(configuration: .release))
            ]
        )
    ]
)
