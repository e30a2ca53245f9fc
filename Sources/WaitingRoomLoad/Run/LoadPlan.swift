import WaitingRoom

/// What a load run does: how many virtual users go through which room, when they arrive, how
/// long each holds its pass, and when a scheduled sale starts. ``LoadRun`` runs it.
public struct LoadPlan: Sendable, Equatable {
    /// The room every user waits in.
    package var room: RoomKey
    /// Its control mode.
    package var control: ControlMode
    /// Virtual users, each its own visitor.
    package var users: Int
    /// Seconds each passed user holds the pass before giving it back.
    package var hold: Double
    /// When users arrive (default: all at once).
    package var arrivals: LoadArrivals
    /// When a scheduled sale starts, from the run's start (nil: no scheduled start). With an
    /// embedded emulator the room gets that start and a shuffled pre-queue.
    package var saleStart: LoadSaleStart?
    /// Seed of Poisson arrivals and of the embedded emulator's pre-queue shuffle.
    package var seed: UInt64
    /// How long the run waits at the end for key returns still running in the background.
    package var drainTimeout: Duration

    /// A plan of `users` users through `room`; the other settings are `waitingroom load`'s defaults.
    public init(
        room: RoomKey, control: ControlMode = .basic, users: Int, hold: Double = 0.1, arrivals: LoadArrivals = .burst,
        saleStart: LoadSaleStart? = nil, seed: UInt64 = 1, drainTimeout: Duration = .seconds(30)
    ) {
        self.room = room
        self.control = control
        self.users = users
        self.hold = hold
        self.arrivals = arrivals
        self.saleStart = saleStart
        self.seed = seed
        self.drainTimeout = drainTimeout
    }
}
