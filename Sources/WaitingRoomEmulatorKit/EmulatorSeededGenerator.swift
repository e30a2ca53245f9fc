/// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", 2014):
/// a small seedable generator, so an emulator's random choices (the pre-queue's shuffle at a
/// sale's start) are the same on every run with the same seed. Not for secrets.
package struct EmulatorSeededGenerator: RandomNumberGenerator, Sendable {
    /// The generator's state: the seed, advanced by the golden-ratio increment per draw.
    package private(set) var state: UInt64

    /// A generator that yields the same sequence for the same `seed`.
    package init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
