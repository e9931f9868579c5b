/// SplitMix64: a tiny, fast, seedable random number generator (Steele, Lea & Flood, 2014).
/// The same seed gives the same sequence on every platform and release.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator seeded with `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform Double in [0, 1) with 53 random bits.
    public mutating func nextUnit() -> Double { Double(next() >> 11) * 0x1p-53 }

    /// A standard normal variate (Box–Muller).
    public mutating func nextGaussian() -> Double {
        let u1 = max(nextUnit(), 0x1p-60), u2 = nextUnit()
        return (-2 * _log(u1)).squareRoot() * _cos(2 * Double.pi * u2)
    }
}

#if canImport(Glibc)
import Glibc
@inline(__always) func _log(_ x: Double) -> Double { Glibc.log(x) }
@inline(__always) func _exp(_ x: Double) -> Double { Glibc.exp(x) }
@inline(__always) func _cos(_ x: Double) -> Double { Glibc.cos(x) }
#else
import Foundation
@inline(__always) func _log(_ x: Double) -> Double { Foundation.log(x) }
@inline(__always) func _exp(_ x: Double) -> Double { Foundation.exp(x) }
@inline(__always) func _cos(_ x: Double) -> Double { Foundation.cos(x) }
#endif
