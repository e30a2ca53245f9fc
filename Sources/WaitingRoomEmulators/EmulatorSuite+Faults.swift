import Foundation
import WaitingRoom
import WaitingRoomEmulatorKit

/// Faults for `waitingroom load --chaos` and `--faults`: injected into the embedded emulators
/// through the emulator kit (``EmulatedVendor``): no vendor is named here.
extension EmulatorSuite {
    /// Installs the kit's chaos rotation on `vendor`'s emulator: `perKind` faults of each of a
    /// `delay` (longer than a usual `networkTimeout`), a dropped connection, HTTP 503 and
    /// garbage on each request kind it names (``EmulatedVendor/chaosKinds``: NetFUNNEL 5101, 5002
    /// and 5004; Queue-it the enqueue call and the queue page; CrowdHandler `POST` and
    /// `GET /v1/requests`; Cloudflare the protected page). Returns how many fault uses were installed.
    /// - Throws: `.invalidConfiguration` (field `vendor`) for a vendor without an emulator.
    @discardableResult
    public func installChaos(vendor id: String, perKind: Int, delay: Duration = .milliseconds(1500)) throws -> Int {
        guard perKind > 0 else { return 0 }
        guard let vendor = vendor(id) else { throw unknownVendor(id, field: "vendor") }
        return vendor.installChaos(perKind: perKind, delay: delay)
    }

    /// Installs faults from a JSON document: an array of `vendor`'s faults, or an object with
    /// one array per vendor id. Each fault is in the kit's form (`{"action": …, "on": …}`) or
    /// the vendor's older one (an alias). Returns how many fault entries were installed.
    /// - Throws: `.invalidConfiguration` naming the field of the first bad fault; nothing is
    ///   installed then.
    @discardableResult
    public func installFaults(_ document: JSONValue, vendor id: String) throws -> Int {
        var sections: [(String, JSONValue)] = []
        switch document {
        case .array:
            sections = [(id, document)]
        case .object(let members):
            for key in members.keys.sorted() {
                guard vendor(key) != nil else { throw unknownVendor(key, field: "faults.\(key)") }
                sections.append((key, members[key] ?? .null))
            }
        default:
            throw WaitingRoomError.invalidConfiguration(
                field: "faults", "expected an array of fault objects, or an object with one array per vendor (\(vendorIDs))")
        }
        var parsed: [(any EmulatedVendor, [EmulatorFault])] = []
        for (section, value) in sections {
            guard let vendor = vendor(section) else { throw unknownVendor(section, field: "faults") }
            guard case .array = value else {
                throw WaitingRoomError.invalidConfiguration(field: "faults.\(section)", "expected an array of fault objects")
            }
            parsed.append((vendor, try vendor.faultVocabulary.parseList(value, path: "faults.\(section)")))
        }
        for (vendor, faults) in parsed { vendor.faultQueue.add(faults) }
        return parsed.reduce(0) { $0 + $1.1.count }
    }

    private var vendorIDs: String { vendors.map(\.vendorID).joined(separator: ", ") }

    private func unknownVendor(_ id: String, field: String) -> WaitingRoomError {
        WaitingRoomError.invalidConfiguration(field: field, "the embedded emulator has no faults for \"\(id)\" (\(vendorIDs))")
    }
}
