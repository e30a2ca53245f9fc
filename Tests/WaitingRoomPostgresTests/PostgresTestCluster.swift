import WaitingRoomBenchSupport
import WaitingRoomPostgres

/// The tests' name for the throwaway cluster of the test process.
typealias PostgresTestCluster = PostgresThrowawayCluster
