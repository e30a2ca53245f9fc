import Foundation
import WaitingRoomTesting

/// Paths and small helpers shared by the NetFUNNEL tests.
enum TestSupport {
    /// `Vendors/NetFUNNEL/`.
    static let vendorDirectory: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func fixture(_ name: String) throws -> [UInt8] {
        let url = vendorDirectory.appendingPathComponent("Fixtures").appendingPathComponent(name)
        return Array(try Data(contentsOf: url))
    }
}

/// The test kit's SplitMix64.
typealias SplitMix64 = SeededRandom
