/// The Snappy block format (no framing), as Parquet uses it: a varint of the uncompressed length,
/// then literals and back-references.
///
/// `compress` is the greedy hash-table matcher of the reference implementation, block by block
/// (64 KiB, so every offset fits two bytes); `decompress` checks every length and offset against
/// the input and the declared output size.
enum Snappy {
    static let blockSize = 1 << 16

    /// The compressed form of `input`.
    static func compress(_ input: UnsafeRawBufferPointer) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(32 + input.count + input.count / 6)
        var n = UInt64(input.count)
        while n >= 0x80 {
            out.append(UInt8(n & 0x7F) | 0x80)
            n >>= 7
        }
        out.append(UInt8(n))
        guard let base = input.baseAddress?.assumingMemoryBound(to: UInt8.self), input.count > 0 else { return out }
        var table = [UInt16](repeating: 0, count: 1 << 14)
        var start = 0
        while start < input.count {
            let end = min(input.count, start + blockSize)
            compressBlock(base + start, count: end - start, table: &table, into: &out)
            start = end
        }
        return out
    }

    @inline(__always)
    private static func load32(_ p: UnsafePointer<UInt8>) -> UInt32 {
        UnsafeRawPointer(p).loadUnaligned(as: UInt32.self)
    }

    @inline(__always)
    private static func hash(_ v: UInt32) -> Int { Int((v &* 0x1E35_A7BD) >> 18) }

    private static func compressBlock(_ p: UnsafePointer<UInt8>, count: Int, table: inout [UInt16], into out: inout [UInt8]) {
        var literalStart = 0
        if count >= 15 {
            for i in table.indices { table[i] = 0 }
            let limit = count - 4  // last position a 4-byte load may start
            var i = 1
            var skip = 32
            table.withUnsafeMutableBufferPointer { t in
                while i <= limit {
                    let v = load32(p + i)
                    let h = hash(v)
                    // Safe: h < 2^14 (a 32-bit product shifted right by 18).
                    let candidate = Int(t[h])
                    t[h] = UInt16(i)
                    if candidate < i && load32(p + candidate) == v {
                        // Emit pending literals, then extend the match.
                        emitLiteral(p + literalStart, count: i - literalStart, into: &out)
                        var length = 4
                        while i + length < count && p[candidate + length] == p[i + length] { length += 1 }
                        emitCopy(offset: i - candidate, length: length, into: &out)
                        i += length
                        literalStart = i
                        skip = 32
                    } else {
                        i += skip >> 5
                        skip += 1
                    }
                }
            }
        }
        emitLiteral(p + literalStart, count: count - literalStart, into: &out)
    }

    private static func emitLiteral(_ p: UnsafePointer<UInt8>, count: Int, into out: inout [UInt8]) {
        guard count > 0 else { return }
        let n = count - 1
        if n < 60 {
            out.append(UInt8(n << 2))
        } else if n < 1 << 8 {
            out.append(60 << 2)
            out.append(UInt8(n))
        } else if n < 1 << 16 {
            out.append(61 << 2)
            out.append(UInt8(n & 0xFF))
            out.append(UInt8(n >> 8))
        } else {
            out.append(62 << 2)
            out.append(UInt8(n & 0xFF))
            out.append(UInt8((n >> 8) & 0xFF))
            out.append(UInt8(n >> 16))
        }
        out.append(contentsOf: UnsafeBufferPointer(start: p, count: count))
    }

    private static func emitCopy(offset: Int, length: Int, into out: inout [UInt8]) {
        var left = length
        func copy2(_ len: Int) {
            out.append(UInt8((len - 1) << 2) | 2)
            out.append(UInt8(offset & 0xFF))
            out.append(UInt8(offset >> 8))
        }
        while left >= 68 {
            copy2(64)
            left -= 64
        }
        if left > 64 {
            copy2(60)
            left -= 60
        }
        copy2(left)
    }

    /// The uncompressed bytes of `input`; `file` and `fileOffset` name it in errors.
    /// - Throws: `InteropError.malformed` for a bad length, offset or tag.
    static func decompress(
        _ input: UnsafeRawBufferPointer, file: String, fileOffset: Int,
        expectedLength: Int? = nil
    ) throws(InteropError) -> [UInt8] {
        let total = try length(of: input, file: file, fileOffset: fileOffset, expectedLength: expectedLength).total
        var failure: InteropError?
        // Slack past the content in the array's capacity, for the decoder's whole-vector copies.
        let out = [UInt8](unsafeUninitializedCapacity: total + slack) { buffer, initialized in
            do throws(InteropError) {
                try decompress(
                    input, file: file, fileOffset: fileOffset, expectedLength: total,
                    into: UnsafeMutableRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(buffer)[0 ..< total]), slack: slack)
                initialized = total
            } catch {
                failure = error
                initialized = 0
            }
        }
        if let failure { throw failure }
        return out
    }

    /// Bytes past the output that `decompress(_:…into:slack:)` may write when it is given them.
    static let slack = 32

    /// The declared uncompressed length of `input` and where the elements start, checked against
    /// `expectedLength` and against the most the rest of the input can expand to.
    private static func length(
        of input: UnsafeRawBufferPointer, file: String, fileOffset: Int, expectedLength: Int?
    ) throws(InteropError) -> (total: Int, start: Int) {
        func bad(_ at: Int, _ detail: String) -> InteropError {
            .malformed(file: file, offset: fileOffset + at, detail: "Snappy: " + detail)
        }
        var i = 0
        var length: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard i < input.count, shift < 35 else { throw bad(i, "bad length prefix") }
            let b = input[i]
            i += 1
            length |= UInt64(b & 0x7F) << shift
            shift += 7
            if b < 0x80 { break }
        }
        if length > UInt64(Int32.max) || (expectedLength.map { $0 < 0 || UInt64($0) != length } ?? false) {
            throw bad(0, "uncompressed length \(length), expected \(expectedLength.map(String.init) ?? "at most 2 GiB")")
        }
        // No element expands more than 64/3 times (a 3-byte copy of 64 bytes), so the rest of the
        // input bounds the output. Checked before the output is allocated: a 5-byte block claiming
        // 2 GiB must not allocate it.
        if length > UInt64(input.count - i) * 22 {
            throw bad(0, "uncompressed length \(length) from \(input.count - i) bytes of Snappy data (at most \((input.count - i) * 22))")
        }
        return (Int(length), i)
    }

    /// Decompresses `input` into `output`, whose size must be the declared length; `slack` bytes
    /// past `output` may be written (never read back), which lets short literals and copies move
    /// as whole 16-byte vectors.
    /// - Throws: `InteropError.malformed` for a bad length, offset or tag.
    static func decompress(
        _ input: UnsafeRawBufferPointer, file: String, fileOffset: Int, expectedLength: Int?,
        into output: UnsafeMutableRawBufferPointer, slack: Int
    ) throws(InteropError) {
        func bad(_ at: Int, _ detail: String) -> InteropError {
            .malformed(file: file, offset: fileOffset + at, detail: "Snappy: " + detail)
        }
        let (total, start) = try length(of: input, file: file, fileOffset: fileOffset, expectedLength: expectedLength)
        guard total == output.count else { throw bad(0, "uncompressed length \(total), expected \(output.count)") }
        // An empty output may have no address: a byte of our own then, never written (every
        // element fails its length check first, and no vector is written without slack).
        let spare = output.baseAddress == nil ? UnsafeMutablePointer<UInt8>.allocate(capacity: 1) : nil
        defer { spare?.deallocate() }
        let dst = spare ?? output.baseAddress!.assumingMemoryBound(to: UInt8.self)
        // Safe: the length prefix was read from the input, so it has an address.
        let src = input.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let n = input.count
        // Whole 16-byte vectors may be written up to `wideEnd` and read up to `n`.
        let wideEnd = spare == nil ? total + Swift.max(0, slack) : 0
        var o = 0
        var i = start
        while i < n {
            let tag = Int(src[i])
            i += 1
            if tag & 3 == 0 {
                var length = tag >> 2
                if length < 60 && length < 16 && i + 16 <= n && o + 16 <= wideEnd {
                    // The common short literal: one vector. Checked against the real ends below.
                    length += 1
                    guard o + length <= total else { throw bad(i, "literal past the declared length \(total)") }
                    // Safe: 16 bytes readable from i (i + 16 <= n) and writable at o (o + 16 <= wideEnd).
                    UnsafeMutableRawPointer(dst + o).storeBytes(
                        of: UnsafeRawPointer(src + i).loadUnaligned(as: SIMD16<UInt8>.self), as: SIMD16<UInt8>.self)
                    i += length
                    o += length
                    continue
                }
                if length >= 60 {
                    let extra = length - 59
                    guard i + extra <= n else { throw bad(i, "literal length past the end") }
                    length = 0
                    for k in 0 ..< extra { length |= Int(src[i + k]) << (8 * k) }
                    i += extra
                }
                length += 1
                guard length <= n - i else { throw bad(i, "literal of \(length) bytes past the end of the input") }
                guard length <= total - o else { throw bad(i, "literal past the declared length \(total)") }
                // Safe: both ranges checked just above.
                UnsafeMutableRawPointer(dst + o).copyMemory(from: src + i, byteCount: length)
                i += length
                o += length
                continue
            }
            var length: Int, offset: Int
            switch tag & 3 {
            case 1:
                guard i < n else { throw bad(i, "copy past the end") }
                length = 4 + (tag >> 2) & 7
                offset = (tag >> 5) << 8 | Int(src[i])
                i += 1
            case 2:
                guard i + 2 <= n else { throw bad(i, "copy past the end") }
                length = (tag >> 2) + 1
                offset = Int(src[i]) | Int(src[i + 1]) << 8
                i += 2
            default:
                guard i + 4 <= n else { throw bad(i, "copy past the end") }
                length = (tag >> 2) + 1
                offset = Int(src[i]) | Int(src[i + 1]) << 8 | Int(src[i + 2]) << 16 | Int(src[i + 3]) << 24
                i += 4
            }
            guard offset > 0 && offset <= o else { throw bad(i, "copy offset \(offset) at output \(o)") }
            guard length <= total - o else { throw bad(i, "copy past the declared length \(total)") }
            var d = dst + o
            let end = d + length
            if offset >= 16 && o + length + 16 <= wideEnd {
                // Safe: each vector is read 16 or more bytes behind where it is written (so from
                // bytes already decoded), and the rounded-up length is writable.
                repeat {
                    UnsafeMutableRawPointer(d).storeBytes(
                        of: UnsafeRawPointer(d - offset).loadUnaligned(as: SIMD16<UInt8>.self), as: SIMD16<UInt8>.self)
                    d += 16
                } while d < end
            } else if offset >= 8 && o + length + 8 <= wideEnd {
                // Safe: as above, with 8-byte words 8 or more bytes behind.
                repeat {
                    UnsafeMutableRawPointer(d).storeBytes(of: UnsafeRawPointer(d - offset).loadUnaligned(as: UInt64.self), as: UInt64.self)
                    d += 8
                } while d < end
            } else {
                // Safe: source and destination lie in the output (checked above).
                while d < end {
                    d.pointee = (d - offset).pointee
                    d += 1
                }
            }
            o += length
        }
        if o != total { throw bad(i, "\(o) bytes decoded, \(total) declared") }
    }
}
