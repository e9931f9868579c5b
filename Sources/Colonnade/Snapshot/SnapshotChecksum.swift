/// The snapshot checksum: a 64-bit, position-dependent hash read one 64-bit word at a time.
///
/// Specified in `docs/SNAPSHOT_FORMAT.md` ("Checksum"). In short: four lanes, each seeded
/// differently; the input is cut into 32-byte stripes (the last one zero-extended), word `i` of a
/// stripe goes to lane `i`, and each lane absorbs its words in order with
/// `v = (v ^ w) &* P1; v ^= v >> 29`. The lanes are then folded together with rotations, the
/// length is mixed in, and a final avalanche spreads every bit.
///
/// Every step is a bijection of the lane (or hash) state for the other inputs fixed, so a change
/// confined to one 64-bit word always changes the checksum; other changes are missed with
/// probability about 2⁻⁶⁴. Not a cryptographic hash: it detects damage, not tampering.
///
/// Speed: one multiply per 8 bytes, four independent dependency chains — about memory speed on
/// one core (the measured figure is in the format document).
public struct SnapshotChecksum: Sendable {
    @usableFromInline static let p1: UInt64 = 0x9E37_79B1_85EB_CA87
    @usableFromInline static let p2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    @usableFromInline static let p3: UInt64 = 0x1656_67B1_9E37_79F9
    @usableFromInline static let p4: UInt64 = 0x85EB_CA77_C2B2_AE63

    @usableFromInline var v0: UInt64, v1: UInt64, v2: UInt64, v3: UInt64
    /// Bytes absorbed so far.
    @usableFromInline var length: UInt64

    /// A hasher with `seed` folded into every lane.
    public init(seed: UInt64) {
        v0 = seed &+ Self.p1
        v1 = seed &+ Self.p2
        v2 = seed &+ Self.p3
        v3 = seed &+ Self.p4
        length = 0
    }

    @inline(__always) @usableFromInline static func round(_ v: UInt64, _ w: UInt64) -> UInt64 {
        let x = (v ^ w) &* p1
        return x ^ (x >> 29)
    }

    /// Absorbs `stripeCount` whole 32-byte stripes at `base` (any alignment).
    @inlinable
    public mutating func combine(stripes base: UnsafeRawPointer, stripeCount: Int) {
        var a = v0, b = v1, c = v2, d = v3
        var p = base
        // Safe: the caller vouches for stripeCount * 32 readable bytes at base.
        for _ in 0 ..< stripeCount {
            a = Self.round(a, UInt64(littleEndian: p.loadUnaligned(as: UInt64.self)))
            b = Self.round(b, UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
            c = Self.round(c, UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 16, as: UInt64.self)))
            d = Self.round(d, UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 24, as: UInt64.self)))
            p += 32
        }
        v0 = a; v1 = b; v2 = c; v3 = d
        length &+= UInt64(stripeCount) &* 32
    }

    /// Absorbs the last bytes (any count): whole stripes, then the rest zero-extended to a stripe.
    /// Call once, at the end; then read `value`.
    public mutating func combineFinal(_ bytes: UnsafeRawBufferPointer) {
        let whole = bytes.count / 32
        if whole > 0, let base = bytes.baseAddress { combine(stripes: base, stripeCount: whole) }
        let rest = bytes.count - whole * 32
        guard rest > 0, let base = bytes.baseAddress else { return }
        var stripe: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &stripe) { s in
            s.baseAddress!.copyMemory(from: base + whole * 32, byteCount: rest)
            combine(stripes: UnsafeRawPointer(s.baseAddress!), stripeCount: 1)
        }
        length = length &- 32 &+ UInt64(rest)
    }

    /// The checksum of everything absorbed.
    public var value: UInt64 {
        @inline(__always) func rotl(_ x: UInt64, _ r: UInt64) -> UInt64 { (x << r) | (x >> (64 - r)) }
        var h = rotl(v0, 1) &+ rotl(v1, 7) &+ rotl(v2, 12) &+ rotl(v3, 18)
        h ^= length &* Self.p3
        h ^= h >> 33; h &*= Self.p2
        h ^= h >> 29; h &*= Self.p3
        h ^= h >> 32
        return h
    }

    /// The checksum of `bytes` with `seed`.
    /// - Complexity: O(bytes.count), one read.
    public static func hash(_ bytes: UnsafeRawBufferPointer, seed: UInt64) -> UInt64 {
        var h = SnapshotChecksum(seed: seed)
        h.combineFinal(bytes)
        return h.value
    }

    /// The checksum of `bytes` with `seed`.
    public static func hash(_ bytes: [UInt8], seed: UInt64) -> UInt64 {
        bytes.withUnsafeBytes { hash($0, seed: seed) }
    }
}
