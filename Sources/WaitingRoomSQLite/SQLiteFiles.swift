import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The store's files on disk: the database, its write-ahead log (`PATH-wal`) and shared-memory
/// index (`PATH-shm`), and the copies a damaged store is moved aside to.
enum SQLiteFiles {
    /// The companions SQLite keeps next to a database file.
    static let companions = ["-wal", "-shm", "-journal"]

    /// Creates an empty database file at `path` with mode 0600 unless one exists. (An empty
    /// file is a valid, empty database; SQLite gives its `-wal` and `-shm` files the mode of
    /// the database file, so they are 0600 too.)
    static func createIfMissing(_ path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd < 0 {
            let code = errno
            if code == EEXIST { return }
            throw SQLiteFileError(message: "cannot create \(path): \(describe(code))")
        }
        // The umask may have taken bits away; set exactly 0600.
        let ok = fchmod(fd, 0o600) == 0
        let code = errno
        closeDescriptor(fd)
        if !ok { throw SQLiteFileError(message: "cannot set mode 0600 on \(path): \(describe(code))") }
    }

    /// What the first bytes of a database file are: SQLite's header string.
    static let header = Array("SQLite format 3\u{0}".utf8)

    /// Why the file at `path` is not this store's to open, or nil. An existing file that does
    /// not start as a database does (SQLite's 16-byte header) holds something else (`--state`
    /// naming a document, `/etc/passwd`): damage recovery would move it aside and put a fresh
    /// database in its place, so it is refused. A missing or empty file, one that starts with
    /// the header (sound or damaged), and one whose first 4 KiB are all zero bytes (a file
    /// zeroed by a crash) are the store's.
    static func foreignContent(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }  // missing (created later) or unreadable (SQLite says why)
        defer { closeDescriptor(fd) }
        var first = [UInt8](repeating: 0, count: 4096)
        let count = first.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        let start = first.prefix(count)
        if start.starts(with: header) || (count < header.count && header.starts(with: start)) { return nil }
        if start.allSatisfy({ $0 == 0 }) { return nil }
        let looksLikeText = start.allSatisfy { $0 == 9 || $0 == 10 || $0 == 13 || (32...126).contains($0) || $0 >= 128 }
        return looksLikeText ? "it holds text, not a SQLite database" : "it does not start as a SQLite database does"
    }

    /// Moves the database at `path` and its companions aside to `PATH.corrupt-EPOCH` (plus
    /// `-wal` and so on; `-2`, `-3`, … when that name is taken). Returns the new name.
    static func moveAside(_ path: String, now: Date = Date()) throws -> String {
        let base = "\(path).corrupt-\(Int(now.timeIntervalSince1970))"
        var aside = base
        var attempt = 1
        while FileManager.default.fileExists(atPath: aside) {
            attempt += 1
            aside = "\(base)-\(attempt)"
        }
        if rename(path, aside) != 0 {
            let code = errno
            if code != ENOENT { throw SQLiteFileError(message: "cannot move \(path) aside to \(aside): \(describe(code))") }
        }
        for suffix in companions where FileManager.default.fileExists(atPath: path + suffix) {
            if rename(path + suffix, aside + suffix) != 0 {
                // A stale log must not be replayed into the fresh database.
                let code = errno
                if unlink(path + suffix) != 0 && errno != ENOENT {
                    throw SQLiteFileError(message: "cannot move \(path + suffix) aside: \(describe(code))")
                }
            }
        }
        return aside
    }

    private static func closeDescriptor(_ fd: Int32) {
        #if canImport(Glibc)
            _ = Glibc.close(fd)
        #else
            _ = Darwin.close(fd)
        #endif
    }

    private static func describe(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "error \(code)" }
        return String(validatingCString: text) ?? "error \(code)"
    }
}

/// A file operation of the store that failed.
struct SQLiteFileError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
