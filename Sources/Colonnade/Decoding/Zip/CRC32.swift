/// The CRC-32 of zip, gzip and PNG (ISO-HDLC: reflected polynomial `0xEDB88320`, initial value and
/// final XOR `0xFFFFFFFF`), computed eight bytes at a time ("slicing-by-8": eight 256-entry tables,
/// one lookup per input byte, no dependency between the eight lookups of a step).
///
///     var crc = CRC32()
///     crc.update(bytes)
///     crc.value          // CRC32.checksum("123456789") == 0xCBF43926
///
/// - Complexity: O(bytes); about one table lookup per byte.
package struct CRC32: Sendable, Hashable {
    /// The checksum of everything passed to `update` so far.
    package var value: UInt32 { ~state }

    private var state: UInt32 = 0xFFFF_FFFF

    /// A checksum of no bytes (`value == 0`).
    package init() {}

    /// The checksum of `bytes`.
    package static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var crc = CRC32()
        crc.update(bytes)
        return crc.value
    }

    /// The checksum of `bytes`.
    package static func checksum<C: Collection>(_ bytes: C) -> UInt32 where C.Element == UInt8 {
        var crc = CRC32()
        let done: Void? = bytes.withContiguousStorageIfAvailable { crc.update(UnsafeRawBufferPointer($0)) }
        if done == nil { Array(bytes).withUnsafeBytes { crc.update($0) } }
        return crc.value
    }

    /// Adds `bytes` to the checksum.
    package mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        update(base.assumingMemoryBound(to: UInt8.self), count: bytes.count)
    }

    /// Adds `count` bytes at `base` to the checksum.
    package mutating func update(_ base: UnsafePointer<UInt8>, count: Int) {
        var crc = state
        var p = base
        var n = count
        CRC32.tables.withUnsafeBufferPointer { t in
            guard let t = t.baseAddress else { return }
            // Safe: every index below is a byte (0...255) plus a multiple of 256 below 2048.
            // Byte at a time up to an 8-byte boundary, so the word loads below are aligned.
            while n > 0 && UInt(bitPattern: p) & 7 != 0 {
                crc = t[Int((crc ^ UInt32(p.pointee)) & 0xFF)] ^ (crc >> 8)
                p += 1
                n -= 1
            }
            while n >= 8 {
                // Safe: 8 bytes remain; the pointer is 8-byte aligned.
                let word = UInt64(littleEndian: UnsafeRawPointer(p).load(as: UInt64.self))
                let lo = UInt32(truncatingIfNeeded: word) ^ crc
                let hi = UInt32(truncatingIfNeeded: word >> 32)
                crc =
                    t[7 * 256 + Int(lo & 0xFF)] ^ t[6 * 256 + Int((lo >> 8) & 0xFF)]
                    ^ t[5 * 256 + Int((lo >> 16) & 0xFF)] ^ t[4 * 256 + Int(lo >> 24)]
                    ^ t[3 * 256 + Int(hi & 0xFF)] ^ t[2 * 256 + Int((hi >> 8) & 0xFF)]
                    ^ t[1 * 256 + Int((hi >> 16) & 0xFF)] ^ t[Int(hi >> 24)]
                p += 8
                n -= 8
            }
            while n > 0 {
                crc = t[Int((crc ^ UInt32(p.pointee)) & 0xFF)] ^ (crc >> 8)
                p += 1
                n -= 1
            }
        }
        state = crc
    }

    /// Table k maps a byte b to the CRC of b followed by k zero bytes.
    static let tables: [UInt32] = {
        var t = [UInt32](repeating: 0, count: 8 * 256)
        for b in 0 ..< 256 {
            var c = UInt32(b)
            for _ in 0 ..< 8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
            t[b] = c
        }
        for k in 1 ..< 8 {
            for b in 0 ..< 256 {
                let previous = t[(k - 1) * 256 + b]
                t[k * 256 + b] = t[Int(previous & 0xFF)] ^ (previous >> 8)
            }
        }
        return t
    }()
}
