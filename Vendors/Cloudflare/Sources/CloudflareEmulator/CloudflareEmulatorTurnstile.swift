extension CloudflareEmulatorConfiguration {
    /// `turnstile_mode`: which Turnstile widget the waiting page runs (`off` by default).
    package enum TurnstileMode: String, Sendable, Hashable, CaseIterable {
        case off, invisible
        case visibleNonInteractive = "visible_non_interactive"
        case visibleManaged = "visible_managed"
    }

    /// `turnstile_action`: what happens to a client that fails the challenge: `log` (counted
    /// only, the default) or `infinite_queue` (a waiting page that refreshes and never lets it in).
    package enum TurnstileAction: String, Sendable, Hashable, CaseIterable {
        case log
        case infiniteQueue = "infinite_queue"
    }
}
