import Foundation
import Logging

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A ``StateStore`` in a JSON file: passes, held keys and session leases of one process that
/// should survive a restart (the SQLite store is the crash-safe choice for a server).
///
/// The file is replaced atomically (write a temporary file with mode 0600 in the same folder,
/// flush, rename), so a reader sees the old or the new file, never half of one. The format
/// keeps one pass per line inside a JSON object:
///
/// ```
/// {"version":2,"passes":[
/// {…pass…},
/// {…pass…}
/// ],"heldKeys":[
/// {…held key…}
/// ],"sessions":[
/// {…session lease…}
/// ]}
/// ```
///
/// (Version 1 files, passes only, are read as they are.)
///
/// so that a damaged file can be salvaged line by line. A corrupt or truncated file is never
/// fatal: it is reported (``problems`` and the logger), moved aside as `NAME.corrupt-EPOCH`,
/// and every pass that can still be read from it is kept.
package actor FilePassStore: StateStore {
    /// The store file.
    package nonisolated let path: String
    private let clock: any WaitingRoomClock
    private let logger: Logger
    private var passes: [PassStoreKey: Pass] = [:]
    private var held: [String: HeldKey] = [:]
    private var sessions: [SessionLeaseID: SessionLeaseRecord] = [:]
    private var loaded = false
    /// What went wrong while reading the file (empty when it was sound).
    package private(set) var problems: [String] = []

    /// Creates a store at `path` (created on first save) judging expiry by `clock`.
    package init(path: String, clock: any WaitingRoomClock = SystemClock(), logger: Logger = Logger(label: "waitingroom.passstore")) {
        self.path = path
        self.clock = clock
        self.logger = logger
    }

    package func pass(vendor: String, room: RoomKey) throws -> Pass? {
        try load()
        let key = PassStoreKey(vendor, room)
        guard let pass = passes[key] else { return nil }
        if pass.isExpired(at: clock.now()) {
            passes[key] = nil
            try persist()
            return nil
        }
        return pass
    }

    package func save(_ pass: Pass) throws {
        try load()
        passes[PassStoreKey(pass.vendor, pass.room)] = pass
        try persist()
    }

    package func remove(vendor: String, room: RoomKey) throws {
        try load()
        passes[PassStoreKey(vendor, room)] = nil
        try persist()
    }

    package func all() throws -> [Pass] {
        try load()
        let now = clock.now()
        return passes.values.filter { !$0.isExpired(at: now) }.sorted(by: Pass.storeOrder)
    }

    /// One process's file: nothing is shared.
    package nonisolated var isShared: Bool { false }
    /// The file outlives the process.
    package nonisolated var isDurable: Bool { true }

    package func recordHeldKey(_ key: HeldKey) throws {
        try load()
        held[key.id] = key
        try persist()
    }

    package func removeHeldKey(id: String) throws {
        try load()
        guard held.removeValue(forKey: id) != nil else { return }
        try persist()
    }

    package func heldKeys() throws -> [HeldKey] {
        try load()
        return held.values.sorted(by: HeldKey.journalOrder)
    }

    package func claimHeldKeys(vendor: String?, owner: String, now: Date, leaseUntil: Date, limit: Int) throws -> [HeldKey] {
        try load()
        let claimed = HeldKey.claim(from: &held, vendor: vendor, owner: owner, now: now, leaseUntil: leaseUntil, limit: limit)
        if !claimed.isEmpty { try persist() }
        return claimed
    }

    package func renewLeases(owner: String, until: Date) throws {
        try load()
        var changed = false
        for (id, key) in held where key.owner == owner {
            held[id]?.leaseUntil = until
            changed = true
        }
        for (id, record) in sessions where record.owner == owner && record.pass == nil {
            sessions[id]?.leaseUntil = until
            changed = true
        }
        if changed { try persist() }
    }

    package func acquireSession(_ id: SessionLeaseID, owner: String, now: Date, until: Date) throws -> SessionClaim {
        try load()
        let (claim, record) = SessionLeaseRecord.claim(sessions[id], id: id, owner: owner, now: now, until: until)
        if sessions[id] != record {
            sessions[id] = record
            try persist()
        }
        return claim
    }

    package func finishSession(_ id: SessionLeaseID, owner: String, pass: Pass?, keepUntil: Date) throws {
        try load()
        guard let record = sessions[id], record.owner == owner else { return }
        if let pass {
            sessions[id] = SessionLeaseRecord(id: id, owner: owner, leaseUntil: pass.expiresAt ?? keepUntil, pass: pass)
        } else {
            sessions[id] = nil
        }
        try persist()
    }

    // MARK: - file format

    private static func encoder() -> JSONEncoder {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys]
        e.dateEncodingStrategy = .millisecondsSince1970
        return e
    }

    private static func decoder() -> JSONDecoder {
        let d = JSONDecoder()
        d.dateDecodingStrategy = .millisecondsSince1970
        return d
    }

    private struct Document: Codable {
        var version: Int
        var passes: [Pass]
        var heldKeys: [HeldKey]?
        var sessions: [SessionLeaseRecord]?
    }

    /// Reads the file now rather than at the first operation: throws when it is not a store
    /// file (see `load()`), so a host can refuse a wrong path before it starts.
    package func open() throws { try load() }

    /// Reads the file once. Missing file: empty store. A file that does not start as a store
    /// file does (`{"version":`, whitespace aside) holds something else (`--state package.json`):
    /// damage recovery would move it aside and write a store in its place, so it is refused
    /// (`.invalidConfiguration`, field `passStore`) and left as it is, at every call.
    private func load() throws {
        guard !loaded else { return }
        guard let data = FileManager.default.contents(atPath: path) else {
            // Missing: an empty store. There but not readable (a directory, no permission): the
            // next save would replace it, so it is refused like someone else's file.
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
                throw WaitingRoomError(
                    .invalidConfiguration,
                    message:
                        "pass store \(path) cannot be read (\(isDirectory.boolValue ? "a directory" : "no permission")); nothing was changed: give a path of its own",
                    field: "passStore")
            }
            // Missing, in a folder that is not there: every save would fail (and a held key's
            // journal entry with it), so the path is refused now.
            let folder = (path as NSString).deletingLastPathComponent
            if !folder.isEmpty, !(FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory) && isDirectory.boolValue) {
                throw WaitingRoomError(
                    .invalidConfiguration,
                    message: "pass store \(path) cannot be created: the folder \(folder) does not exist",
                    field: "passStore")
            }
            loaded = true
            return
        }
        guard Self.mayBeAStoreFile(data) else {
            throw WaitingRoomError(
                .invalidConfiguration,
                message:
                    "pass store \(path) is not a store file (it does not start with {\"version\":); nothing was changed: give a path of its own, or move the file away",
                field: "passStore")
        }
        loaded = true
        if data.isEmpty { return }
        if let doc = try? Self.decoder().decode(Document.self, from: data) {
            for pass in doc.passes { passes[PassStoreKey(pass.vendor, pass.room)] = pass }
            for key in doc.heldKeys ?? [] { held[key.id] = key }
            for record in doc.sessions ?? [] { sessions[record.id] = record }
            return
        }
        // Damaged: salvage every line that still holds a whole pass, then move the file aside.
        var salvaged = 0
        let text = String(decoding: data, as: UTF8.self)
        for line in text.split(whereSeparator: \.isNewline) {
            var candidate = line.trimmingCharacters(in: .whitespaces)
            if candidate.hasSuffix(",") { candidate.removeLast() }
            guard candidate.hasPrefix("{") else { continue }
            let bytes = Data(candidate.utf8)
            if let key = try? Self.decoder().decode(HeldKey.self, from: bytes) {
                held[key.id] = key
            } else if let record = try? Self.decoder().decode(SessionLeaseRecord.self, from: bytes) {
                sessions[record.id] = record
            } else if let pass = try? Self.decoder().decode(Pass.self, from: bytes) {
                passes[PassStoreKey(pass.vendor, pass.room)] = pass
            } else {
                continue
            }
            salvaged += 1
        }
        let aside = "\(path).corrupt-\(Int(Date().timeIntervalSince1970))"
        let moved = (try? FileManager.default.moveItem(atPath: path, toPath: aside)) != nil
        let problem =
            "pass store \(path) was damaged (\(data.count) bytes); kept \(salvaged) readable record(s) (passes, held keys, sessions); "
            + (moved ? "the damaged file is at \(aside)" : "could not move the damaged file aside")
        problems.append(problem)
        logger.warning("\(problem)")
        try persist()
    }

    /// Whether `data` starts as this store writes its file, `{"version":` (ASCII whitespace
    /// between the parts allowed, for a file someone reformatted), or is cut short before that
    /// (an empty or truncated file).
    static func mayBeAStoreFile(_ data: Data) -> Bool {
        let signature = Array(#"{"version":"#.utf8)
        var matched = 0
        for byte in data {
            if byte == 32 || byte == 9 || byte == 10 || byte == 13 { continue }
            guard byte == signature[matched] else { return false }
            matched += 1
            if matched == signature.count { return true }
        }
        return true
    }

    /// Writes all passes atomically with mode 0600.
    private func persist() throws {
        let encoder = Self.encoder()
        var text = "{\"version\":2,\"passes\":[\n"
        text += try passes.values.sorted(by: Pass.storeOrder).map { String(decoding: try encoder.encode($0), as: UTF8.self) }
            .joined(separator: ",\n")
        text += "\n],\"heldKeys\":[\n"
        text += try held.values.sorted(by: HeldKey.journalOrder).map { String(decoding: try encoder.encode($0), as: UTF8.self) }
            .joined(separator: ",\n")
        text += "\n],\"sessions\":[\n"
        text += try sessions.values.sorted { $0.id.description < $1.id.description }
            .map { String(decoding: try encoder.encode($0), as: UTF8.self) }.joined(separator: ",\n")
        text += "\n]}\n"
        try Self.atomicWrite(Array(text.utf8), to: path)
    }

    /// Writes `bytes` to a temporary file next to `path` (mode 0600), syncs it and renames it
    /// over `path`.
    static func atomicWrite(_ bytes: [UInt8], to path: String) throws {
        let directory = (path as NSString).deletingLastPathComponent
        let folder = directory.isEmpty ? "." : directory
        let template = folder + "/.\((path as NSString).lastPathComponent).XXXXXX"
        var nameBuffer = Array(template.utf8CString)
        let fd = nameBuffer.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else {
            throw WaitingRoomError(
                .invalidConfiguration, message: "cannot write the pass store in \(folder): \(Self.describeErrno())", field: "passStore")
        }
        let tempPath = String(decoding: nameBuffer.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var ok = fchmod(fd, 0o600) == 0
        var written = 0
        while ok && written < bytes.count {
            let n = bytes[written...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n <= 0 { ok = false } else { written += n }
        }
        ok = ok && fsync(fd) == 0
        closeDescriptor(fd)
        guard ok, rename(tempPath, path) == 0 else {
            let reason = Self.describeErrno()
            unlink(tempPath)
            throw WaitingRoomError(.invalidConfiguration, message: "cannot write the pass store \(path): \(reason)", field: "passStore")
        }
    }

    private static func closeDescriptor(_ fd: Int32) {
        #if canImport(Glibc)
            _ = Glibc.close(fd)
        #else
            _ = Darwin.close(fd)
        #endif
    }

    static func describeErrno() -> String {
        let code = errno
        guard let text = strerror(code) else { return "error \(code)" }
        return String(validatingCString: text) ?? "error \(code)"
    }
}
