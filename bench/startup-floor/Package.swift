// swift-tools-version:6.0
// A minimal ArgumentParser tool (three subcommands, no Foundation of its own), linked the way
// Package.swift links the release `waitingroom`: the start-up floor of any such command line.
// Built and timed by bench/startup-floor.sh; not part of the WaitingRoom package.
import PackageDescription

let package = Package(
    name: "startup-floor",
    dependencies: [.package(path: "../../.build/checkouts/swift-argument-parser")],
    targets: [
        .executableTarget(
            name: "floor-tool",
            dependencies: [.product(name: "ArgumentParser", package: "swift-argument-parser")],
            linkerSettings: [
                .unsafeFlags(["-static-stdlib", "-Xclang-linker", "-no-pie", "-Xlinker", "--start-group", "-lFoundationEssentials", "-l_FoundationCShims", "-l_FoundationCollections", "-lswiftSynchronization", "-Xlinker", "--end-group", "-Xlinker", "--no-export-dynamic"], .when(configuration: .release)),
            ]
        ),
    ]
)
