/// XXH64, the 64-bit xxHash (https://github.com/Cyan4973/xxHash/blob/dev/doc/xxhash_spec.md),
/// which Zstandard frames use for their content checksum (seed 0, low 32 bits stored).
///
/// ```swift
/// let h = bytes.withUnsafeBytes { XXHash64.hash($0) }
/// ```
enum XXHash64 {
    static let prime1: UInt64 = 0x9E37_79B1_85EB_CA87
    static let prime2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    static let prime3: UInt64 = 0x1656_67B1_9E37_79F9
    static let prime4: UInt64 = 0x85EB_CA77_C2B2_AE63
    static let prime5: UInt64 = 0x27D4_EB2F_1656_67C5

    @inline(__always)
    static func round(_ acc: UInt64, _ lane: UInt64) -> UInt64 {
        var acc = acc &+ lane &* prime2
        acc = (acc << 31) | (acc >> 33)
        return acc &* prime1
    }

    @inline(__always)
    static func merge(_ acc: UInt64, _ value: UInt64) -> UInt64 {
        (acc ^ round(0, value)) &* prime1 &+ prime4
    }

    /// The XXH64 hash of `bytes` with `seed`.
    /// - Complexity: O(n).
    static func hash(_ bytes: UnsafeRawBufferPointer, seed: UInt64 = 0) -> UInt64 {
        let count = bytes.count
        guard let base = bytes.baseAddress, count > 0 else { return finish(seed &+ prime5, base: nil, count: 0, from: 0) }
        var position = 0
        var h: UInt64
        if count >= 32 {
            var v1 = seed &+ prime1 &+ prime2, v2 = seed &+ prime2, v3 = seed, v4 = seed &- prime1
            while position + 32 <= count {
                // Safe: position + 32 <= count.
                v1 = round(v1, UInt64(littleEndian: base.loadUnaligned(fromByteOffset: position, as: UInt64.self)))
                v2 = round(v2, UInt64(littleEndian: base.loadUnaligned(fromByteOffset: position + 8, as: UInt64.self)))
                v3 = round(v3, UInt64(littleEndian: base.loadUnaligned(fromByteOffset: position + 16, as: UInt64.self)))
                v4 = round(v4, UInt64(littleEndian: base.loadUnaligned(fromByteOffset: position + 24, as: UInt64.self)))
                position += 32
            }
            h = ((v1 << 1) | (v1 >> 63)) &+ ((v2 << 7) | (v2 >> 57)) &+ ((v3 << 12) | (v3 >> 52)) &+ ((v4 << 18) | (v4 >> 46))
            h = merge(h, v1)
            h = merge(h, v2)
            h = merge(h, v3)
            h = merge(h, v4)
        } else {
            h = seed &+ prime5
        }
        return finish(h, base: base, count: count, from: position)
    }

    private static func finish(_ start: UInt64, base: UnsafeRawPointer?, count: Int, from: Int) -> UInt64 {
        var h = start &+ UInt64(count)
        var position = from
        if let base {
            while position + 8 <= count {
                // Safe: position + 8 <= count.
                let lane = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: position, as: UInt64.self))
                h ^= round(0, lane)
                h = ((h << 27) | (h >> 37)) &* prime1 &+ prime4
                position += 8
            }
            if position + 4 <= count {
                // Safe: position + 4 <= count.
                let lane = UInt64(UInt32(littleEndian: base.loadUnaligned(fromByteOffset: position, as: UInt32.self)))
                h ^= lane &* prime1
                h = ((h << 23) | (h >> 41)) &* prime2 &+ prime3
                position += 4
            }
            while position < count {
                // Safe: position < count.
                h ^= UInt64(base.load(fromByteOffset: position, as: UInt8.self)) &* prime5
                h = ((h << 11) | (h >> 53)) &* prime1
                position += 1
            }
        }
        h ^= h >> 33
        h = h &* prime2
        h ^= h >> 29
        h = h &* prime3
        h ^= h >> 32
        return h
    }
}
