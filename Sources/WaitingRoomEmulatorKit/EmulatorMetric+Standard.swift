extension EmulatorMetric {
    /// Users waiting in line now, per room (`vendor`, `scope`, `room`).
    package static let usersWaiting = EmulatorMetric(
        name: prefix + "users_waiting", help: "Users waiting in line in the room now.", kind: .gauge)
    /// Users inside now (holding a slot), per room, for rooms with a concurrency limit.
    package static let usersInside = EmulatorMetric(
        name: prefix + "users_inside",
        help: "Users inside the room now (holding a slot); only rooms with a limit on users inside.", kind: .gauge)
    /// Users admitted since the emulator started or was reset, per room.
    package static let admittedTotal = EmulatorMetric(
        name: prefix + "admitted_total", help: "Users admitted to the room since the emulator started or was reset.",
        kind: .counter)
    /// Admissions per second, per room: measured, or the room's configured rate (a rate a vendor
    /// configures per minute, as CrowdHandler does, is given divided by 60).
    package static let admissionRate = EmulatorMetric(
        name: prefix + "admission_rate_per_second",
        help: "Admissions per second in the room: measured over the room's window, or the configured rate "
            + "(a rate configured per minute, as CrowdHandler rooms have, divided by 60).",
        kind: .gauge)
    /// Keys handed out and not returned by the client (returned by the emulator itself, or still
    /// held), per vendor whose passes hold keys.
    package static let keysNeverReturned = EmulatorMetric(
        name: prefix + "keys_never_returned",
        help: "Keys taken and never returned by a client: returned by the emulator itself (timeout, expiry) or still held.",
        kind: .gauge)
    /// Keys the emulator returned itself (segment timeout, missing alive notice, expiry), per vendor.
    package static let keysAutoReturned = EmulatorMetric(
        name: prefix + "keys_auto_returned_total",
        help: "Taken keys the emulator returned itself (segment timeout, missing alive notice, alive expiry).",
        kind: .counter)
    /// Faults injected so far, per vendor (each fault use counts once).
    package static let faultsInjected = EmulatorMetric(
        name: prefix + "faults_injected_total", help: "Faults injected into requests so far (each fault use counts once).",
        kind: .counter)
    /// Fault uses still waiting to be injected, per vendor.
    package static let faultsPending = EmulatorMetric(
        name: prefix + "faults_pending", help: "Fault uses installed and not injected yet (chaos faults included).",
        kind: .gauge)
    /// Requests per kind (`kind`: NetFUNNEL's opcode, Queue-it's and CrowdHandler's route kinds,
    /// as `waitingroom load`'s report names them), per vendor.
    package static let requests = EmulatorMetric(
        name: prefix + "requests_total",
        help: "Requests received per kind (NetFUNNEL opcode, Queue-it and CrowdHandler route), named as in the load report.",
        kind: .counter)
    /// Replies per result (`code`: NetFUNNEL's result code, Queue-it's and CrowdHandler's answer
    /// kinds, as `waitingroom load`'s report names them), per vendor.
    package static let replies = EmulatorMetric(
        name: prefix + "replies_total",
        help: "Replies sent per result code or answer kind (NetFUNNEL result code, Queue-it and CrowdHandler answer), "
            + "named as in the load report.",
        kind: .counter)

    /// The kit's families, in the order the standard figures are listed.
    package static let standard: [EmulatorMetric] = [
        usersWaiting, usersInside, admittedTotal, admissionRate, keysNeverReturned, keysAutoReturned, faultsInjected,
        faultsPending, requests, replies
    ]
}
