/// XXH32 (Yann Collet's xxHash, 32-bit), as the LZ4 frame format uses it for its header, block
/// and content checksums. One shot or streaming (`update` in pieces gives the same digest).
///
///     XXHash32.hash(bytes, seed: 0)
///
/// - Complexity: O(n); one multiply-rotate per 4 bytes.
public struct XXHash32: Sendable {
    static let p1: UInt32 = 2_654_435_761, p2: UInt32 = 2_246_822_519, p3: UInt32 = 3_266_489_917
    static let p4: UInt32 = 668_265_263, p5: UInt32 = 374_761_393

    private var v1: UInt32, v2: UInt32, v3: UInt32, v4: UInt32
    private let seed: UInt32
    private var total = 0
    /// Bytes not yet making a 16-byte stripe.
    private var pending: [UInt8] = []

    /// A hasher with `seed`.
    public init(seed: UInt32 = 0) {
        self.seed = seed
        v1 = seed &+ Self.p1 &+ Self.p2
        v2 = seed &+ Self.p2
        v3 = seed
        v4 = seed &- Self.p1
        pending.reserveCapacity(16)
    }

    /// The digest of `bytes`.
    public static func hash(_ bytes: UnsafeRawBufferPointer, seed: UInt32 = 0) -> UInt32 {
        var h = XXHash32(seed: seed)
        h.update(bytes)
        return h.finalize()
    }

    @inline(__always) private static func rotl(_ x: UInt32, _ r: UInt32) -> UInt32 { (x << r) | (x >> (32 - r)) }

    @inline(__always) private static func round(_ v: UInt32, _ lane: UInt32) -> UInt32 {
        (rotl(v &+ lane &* p2, 13)) &* p1
    }

    /// Adds `bytes`.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        total += bytes.count
        var i = 0
        if !pending.isEmpty {
            while pending.count < 16 && i < bytes.count {
                pending.append(bytes[i])
                i += 1
            }
            if pending.count < 16 { return }
            pending.withUnsafeBytes { stripe($0.baseAddress!) }
            pending.removeAll(keepingCapacity: true)
        }
        guard let base = bytes.baseAddress else { return }
        // The four lanes in locals, so the loop keeps them in registers.
        var a = v1, b = v2, c = v3, d = v4
        while bytes.count - i >= 16 {
            let p = base + i
            a = Self.round(a, UInt32(littleEndian: p.loadUnaligned(as: UInt32.self)))
            b = Self.round(b, UInt32(littleEndian: p.loadUnaligned(fromByteOffset: 4, as: UInt32.self)))
            c = Self.round(c, UInt32(littleEndian: p.loadUnaligned(fromByteOffset: 8, as: UInt32.self)))
            d = Self.round(d, UInt32(littleEndian: p.loadUnaligned(fromByteOffset: 12, as: UInt32.self)))
            i += 16
        }
        v1 = a
        v2 = b
        v3 = c
        v4 = d
        while i < bytes.count {
            pending.append(bytes[i])
            i += 1
        }
    }

    @inline(__always) private mutating func stripe(_ p: UnsafeRawPointer) {
        v1 = Self.round(v1, UInt32(littleEndian: p.loadUnaligned(as: UInt32.self)))
        v2 = Self.round(v2, UInt32(littleEndian: p.loadUnaligned(fromByteOffset: 4, as: UInt32.self)))
        v3 = Self.round(v3, UInt32(littleEndian: p.loadUnaligned(fromByteOffset: 8, as: UInt32.self)))
        v4 = Self.round(v4, UInt32(littleEndian: p.loadUnaligned(fromByteOffset: 12, as: UInt32.self)))
    }

    /// The digest of everything added.
    public func finalize() -> UInt32 {
        var h: UInt32 = total >= 16 ? Self.rotl(v1, 1) &+ Self.rotl(v2, 7) &+ Self.rotl(v3, 12) &+ Self.rotl(v4, 18) : seed &+ Self.p5
        h = h &+ UInt32(truncatingIfNeeded: total)
        var i = 0
        while pending.count - i >= 4 {
            let lane = UInt32(pending[i]) | UInt32(pending[i + 1]) << 8 | UInt32(pending[i + 2]) << 16 | UInt32(pending[i + 3]) << 24
            h = (Self.rotl(h &+ lane &* Self.p3, 17)) &* Self.p4
            i += 4
        }
        while i < pending.count {
            h = (Self.rotl(h &+ UInt32(pending[i]) &* Self.p5, 11)) &* Self.p1
            i += 1
        }
        h ^= h >> 15
        h = h &* Self.p2
        h ^= h >> 13
        h = h &* Self.p3
        h ^= h >> 16
        return h
    }
}
