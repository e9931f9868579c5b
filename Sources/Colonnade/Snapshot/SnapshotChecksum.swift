/// The snapshot checksum: a 64-bit, position-dependent hash read one 64-bit word at a time.
///
/// Specified exactly in `docs/SNAPSHOT_FORMAT.md` ("Checksum"). In short: eight lanes, each
/// seeded differently; the input is cut into 64-byte stripes (the last one zero-extended), word
/// `i` of a stripe goes to lane `i`, and lane `i` absorbs its words in order with
/// `x = (v ^ w) &* P1; v = x ^ (x >> s_i)`, where the shift `s_i` is 29 + i. The lanes are then
/// folded together with rotations, the length is mixed in, and a final avalanche spreads every bit.
///
/// Every step is a bijection of the lane (or hash) state when the other inputs are fixed, so a
/// change confined to one 64-bit word always changes the checksum; other changes are missed with
/// probability about 2⁻⁶⁴. Position dependence comes from the lane a word lands in and the order
/// in which a lane absorbs its words. Not a cryptographic hash: it detects damage, not tampering.
///
/// Why eight lanes: each lane is a chain of xor, multiply, shift, xor (about 6 cycles), so four
/// lanes are latency-bound and eight are not (docs/MEASUREMENTS.md, *Checksum lanes*).
/// The shifts differ per lane so that LLVM does not turn the lanes into SSE2 vectors (x86-64 has no
/// 64-bit vector multiply before AVX-512, and the emulation is slower than scalar `imul`).
public struct SnapshotChecksum: Sendable {
    @usableFromInline static let p1: UInt64 = 0x9E37_79B1_85EB_CA87
    @usableFromInline static let p2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    @usableFromInline static let p3: UInt64 = 0x1656_67B1_9E37_79F9

    /// Bytes per stripe: one 64-bit word per lane.
    public static let stripeBytes = 64

    @usableFromInline var v0, v1, v2, v3, v4, v5, v6, v7: UInt64
    /// Bytes absorbed so far.
    @usableFromInline var length: UInt64

    /// A hasher with `seed` folded into every lane: lane `i` starts at `seed &+ (i + 1) &* P2`.
    public init(seed: UInt64) {
        v0 = seed &+ 1 &* Self.p2
        v1 = seed &+ 2 &* Self.p2
        v2 = seed &+ 3 &* Self.p2
        v3 = seed &+ 4 &* Self.p2
        v4 = seed &+ 5 &* Self.p2
        v5 = seed &+ 6 &* Self.p2
        v6 = seed &+ 7 &* Self.p2
        v7 = seed &+ 8 &* Self.p2
        length = 0
    }

    @inline(__always) @usableFromInline static func round(_ v: UInt64, _ w: UInt64, _ shift: UInt64) -> UInt64 {
        let x = (v ^ w) &* p1
        return x ^ (x >> shift)
    }

    /// Absorbs `stripeCount` whole 64-byte stripes at `base` (any alignment).
    @inlinable
    public mutating func combine(stripes base: UnsafeRawPointer, stripeCount: Int) {
        var a = v0, b = v1, c = v2, d = v3, e = v4, f = v5, g = v6, h = v7
        var p = base
        // Safe: the caller vouches for stripeCount * 64 readable bytes at base.
        for _ in 0 ..< stripeCount {
            a = Self.round(a, UInt64(littleEndian: p.loadUnaligned(as: UInt64.self)), 29)
            b = Self.round(b, UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 8, as: UInt64.self)), 30)
            c = Self.round(c, UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 16, as: UInt64.self)), 31)
            d = Self.round(d, UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 24, as: UInt64.self)), 32)
            e = Self.round(e, UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 32, as: UInt64.self)), 33)
            f = Self.round(f, UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 40, as: UInt64.self)), 34)
            g = Self.round(g, UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 48, as: UInt64.self)), 35)
            h = Self.round(h, UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 56, as: UInt64.self)), 36)
            p += 64
        }
        v0 = a
        v1 = b
        v2 = c
        v3 = d
        v4 = e
        v5 = f
        v6 = g
        v7 = h
        length &+= UInt64(stripeCount) &* 64
    }

    /// Absorbs the last bytes (any count): whole stripes, then the rest zero-extended to a stripe.
    /// Call once, at the end; then read `value`.
    public mutating func combineFinal(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress else { return }
        let whole = bytes.count / 64
        if whole > 0 { combine(stripes: base, stripeCount: whole) }
        let rest = bytes.count - whole * 64
        guard rest > 0 else { return }
        var stripe: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &stripe) { s in
            // Safe: the tuple is 64 bytes and rest < 64.
            s.baseAddress!.copyMemory(from: base + whole * 64, byteCount: rest)
            combine(stripes: UnsafeRawPointer(s.baseAddress!), stripeCount: 1)
        }
        length = length &- 64 &+ UInt64(rest)
    }

    /// The checksum of everything absorbed.
    public var value: UInt64 {
        @inline(__always) func rotl(_ x: UInt64, _ r: UInt64) -> UInt64 { (x << r) | (x >> (64 - r)) }
        var h = rotl(v0, 1) &+ rotl(v1, 7) &+ rotl(v2, 12) &+ rotl(v3, 18)
        h = h &+ rotl(v4, 23) &+ rotl(v5, 29) &+ rotl(v6, 34) &+ rotl(v7, 40)
        h ^= length &* Self.p3
        h ^= h >> 33
        h &*= Self.p2
        h ^= h >> 29
        h &*= Self.p3
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
