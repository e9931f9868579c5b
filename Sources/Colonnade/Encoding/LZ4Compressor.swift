/// LZ4 compression: the block format (Parquet's `LZ4_RAW`) and the frame format (Arrow IPC's
/// `LZ4_FRAME`), which `LZ4.decompressBlock`/`decompressFrame` and the `lz4` tool read.
/// ARCHITECTURE.md, Encoding.
///
/// The matcher is the reference's greedy one: a hash table of 4-byte prefixes, offsets up to
/// 65,535, a step that grows over data that does not match; the block's last 5 bytes are
/// literals and its last match starts at least 12 bytes before its end, as the format requires.
public enum LZ4Compressor {
    /// The block format of `input` (no size prefix).
    public static func compressBlock(_ input: UnsafeRawBufferPointer) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(input.count + input.count / 255 + 16)
        var table = [Int32](repeating: -1, count: 1 << 14)
        compressBlock(input, table: &table, into: &out)
        return out
    }

    /// The frame format of `input` (RFC-less, lz4's `lz4_Frame_format.md`): the content size and
    /// checksum in the descriptor, independent blocks of at most 4 MiB, each stored raw when it
    /// does not shrink.
    public static func compressFrame(_ input: UnsafeRawBufferPointer) -> [UInt8] {
        var out: [UInt8] = [0x04, 0x22, 0x4D, 0x18]
        // FLG: version 01, independent blocks, content size, content checksum. BD: 4 MiB blocks.
        var descriptor: [UInt8] = [0x40 | 0x20 | 0x08 | 0x04, 0x70]
        var size = UInt64(input.count)
        for _ in 0 ..< 8 {
            descriptor.append(UInt8(truncatingIfNeeded: size))
            size >>= 8
        }
        let check = descriptor.withUnsafeBytes { XXHash32.hash($0) }
        out.append(contentsOf: descriptor)
        out.append(UInt8(truncatingIfNeeded: check >> 8))
        var table = [Int32](repeating: -1, count: 1 << 14)
        var block: [UInt8] = []
        let blockSize = 4 << 20
        var start = 0
        while start < input.count {
            let end = min(input.count, start + blockSize)
            let piece = UnsafeRawBufferPointer(rebasing: input[start ..< end])
            block.removeAll(keepingCapacity: true)
            for i in table.indices { table[i] = -1 }
            compressBlock(piece, table: &table, into: &block)
            if block.count < piece.count {
                appendLE32(&out, UInt32(block.count))
                out.append(contentsOf: block)
            } else {
                appendLE32(&out, UInt32(piece.count) | 0x8000_0000)
                out.append(contentsOf: piece)
            }
            start = end
        }
        appendLE32(&out, 0)
        appendLE32(&out, XXHash32.hash(input))
        return out
    }

    static func appendLE32(_ out: inout [UInt8], _ v: UInt32) {
        out.append(UInt8(truncatingIfNeeded: v))
        out.append(UInt8(truncatingIfNeeded: v >> 8))
        out.append(UInt8(truncatingIfNeeded: v >> 16))
        out.append(UInt8(truncatingIfNeeded: v >> 24))
    }

    static func compressBlock(_ input: UnsafeRawBufferPointer, table: inout [Int32], into out: inout [UInt8]) {
        let count = input.count
        var anchor = 0
        if let base = input.baseAddress?.assumingMemoryBound(to: UInt8.self), count >= 13 {
            // A match may start up to 12 bytes before the end, and leaves the last 5 as literals.
            let matchLimit = count - 12
            let matchEnd = count - 5
            var ip = 0
            table.withUnsafeMutableBufferPointer { t in
                @inline(__always) func hash(_ p: Int) -> Int {
                    Int((UnsafeRawPointer(base + p).loadUnaligned(as: UInt32.self) &* 2_654_435_761) >> 18)
                }
                while ip < matchLimit {
                    let h = hash(ip)
                    let candidate = Int(t[h])
                    t[h] = Int32(ip)
                    guard candidate >= 0, ip - candidate <= 65535,
                        UnsafeRawPointer(base + candidate).loadUnaligned(as: UInt32.self)
                            == UnsafeRawPointer(base + ip).loadUnaligned(as: UInt32.self)
                    else {
                        ip += 1 + ((ip - anchor) >> 6)
                        continue
                    }
                    let length = 4 + ZstdCompressor.matchLength(base + ip + 4, base + candidate + 4, limit: matchEnd - ip - 4)
                    emit(base, literalsFrom: anchor, to: ip, offset: ip - candidate, length: length, into: &out)
                    ip += length
                    anchor = ip
                    if ip - 2 < matchLimit { t[hash(ip - 2)] = Int32(ip - 2) }
                }
            }
            emit(base, literalsFrom: anchor, to: count, offset: 0, length: 0, into: &out)
        } else if let base = input.baseAddress?.assumingMemoryBound(to: UInt8.self) {
            emit(base, literalsFrom: 0, to: count, offset: 0, length: 0, into: &out)
        } else {
            out.append(0)
        }
    }

    /// One sequence: literals `from ..< to`, then (length > 0) a match.
    static func emit(_ base: UnsafePointer<UInt8>, literalsFrom from: Int, to: Int, offset: Int, length: Int, into out: inout [UInt8]) {
        let literals = to - from
        let matchCode = length > 0 ? length - 4 : 0
        out.append(UInt8(min(literals, 15) << 4 | min(matchCode, 15)))
        if literals >= 15 {
            var rest = literals - 15
            while rest >= 255 {
                out.append(255)
                rest -= 255
            }
            out.append(UInt8(rest))
        }
        out.append(contentsOf: UnsafeBufferPointer(start: base + from, count: literals))
        guard length > 0 else { return }
        out.append(UInt8(offset & 0xFF))
        out.append(UInt8(offset >> 8))
        if matchCode >= 15 {
            var rest = matchCode - 15
            while rest >= 255 {
                out.append(255)
                rest -= 255
            }
            out.append(UInt8(rest))
        }
    }
}
