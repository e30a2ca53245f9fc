import CEditLine
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Reads REPL input: libedit (BSD licence) with history on a terminal, plain lines otherwise.
///
/// Reading blocks, so each line is read on a thread of its own, never on the cooperative pool.
struct LineReader: Sendable {
    /// Interactive (libedit, prompts, history) or plain (no prompts: piped input, scripts).
    let interactive: Bool
    /// The history file (interactive only).
    let historyPath: String?

    init(interactive: Bool, historyPath: String?) {
        self.interactive = interactive
        self.historyPath = historyPath
        if interactive {
            using_history()
            if let historyPath { _ = read_history(historyPath) }
        }
    }

    /// The next line, or nil at end of input (Ctrl-D).
    func next(prompt: String) async -> String? {
        let interactive = self.interactive
        return await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
            let thread = Thread {
                continuation.resume(returning: interactive ? Self.editLine(prompt) : Swift.readLine(strippingNewline: true))
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
    }

    /// Adds a (possibly multi-line) entry to the history and saves the file.
    func remember(_ entry: String) {
        guard interactive, !entry.trimmingCharacters(in: .whitespaces).isEmpty else { return }
        _ = add_history(entry)
        if let historyPath { _ = write_history(historyPath) }
    }

    private static func editLine(_ prompt: String) -> String? {
        guard let raw = readline(prompt) else { return nil }
        defer { free(raw) }
        return String(validatingCString: raw) ?? ""
    }

    /// What libedit writes first in a history file.
    static let historyHeader = Array("_HiStOrY_V2_".utf8)

    /// Whether the REPL may keep its history in `path`: a missing or empty file, or one that
    /// starts as libedit writes them. Any other file is someone else's (`--history notes.txt`):
    /// libedit would read its lines as history and write them back reformatted.
    static func mayKeepHistory(in path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return !FileManager.default.fileExists(atPath: path) }
        defer { try? handle.close() }
        let start = Array((try? handle.read(upToCount: historyHeader.count)) ?? Data())
        return start.isEmpty || start == historyHeader
    }

    /// `~/.waitingroom_history`, or nil when there is no home directory.
    static var defaultHistoryPath: String? {
        guard let home = ProcessInfo.processInfo.environment["HOME"], !home.isEmpty else { return nil }
        return home + "/.waitingroom_history"
    }
}
