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
        let total = Int(length)
        var out = [UInt8](repeating: 0, count: total)
        var o = 0
        let failure: InteropError? = out.withUnsafeMutableBufferPointer { dst in
            while i < input.count {
                let tag = input[i]
                i += 1
                switch tag & 3 {
                case 0:
                    var n = Int(tag >> 2)
                    if n >= 60 {
                        let extra = n - 59
                        guard i + extra <= input.count else { return bad(i, "literal length past the end") }
                        n = 0
                        for k in 0 ..< extra { n |= Int(input[i + k]) << (8 * k) }
                        i += extra
                    }
                    n += 1
                    guard i + n <= input.count else { return bad(i, "literal of \(n) bytes past the end of the input") }
                    guard o + n <= total else { return bad(i, "literal past the declared length \(total)") }
                    // Safe: both ranges checked just above.
                    UnsafeMutableRawPointer(dst.baseAddress! + o).copyMemory(from: input.baseAddress! + i, byteCount: n)
                    i += n
                    o += n
                default:
                    var n = 0, offset = 0
                    switch tag & 3 {
                    case 1:
                        guard i < input.count else { return bad(i, "copy past the end") }
                        n = 4 + Int((tag >> 2) & 7)
                        offset = Int(tag >> 5) << 8 | Int(input[i])
                        i += 1
                    case 2:
                        guard i + 2 <= input.count else { return bad(i, "copy past the end") }
                        n = Int(tag >> 2) + 1
                        offset = Int(input[i]) | Int(input[i + 1]) << 8
                        i += 2
                    default:
                        guard i + 4 <= input.count else { return bad(i, "copy past the end") }
                        n = Int(tag >> 2) + 1
                        offset = Int(input[i]) | Int(input[i + 1]) << 8 | Int(input[i + 2]) << 16 | Int(input[i + 3]) << 24
                        i += 4
                    }
                    guard offset > 0 && offset <= o else { return bad(i, "copy offset \(offset) at output \(o)") }
                    guard o + n <= total else { return bad(i, "copy past the declared length \(total)") }
                    // Safe: source o - offset ..< o - offset + n and destination o ..< o + n lie in dst (checked).
                    for k in 0 ..< n { dst[o + k] = dst[o - offset + k] }
                    o += n
                }
            }
            return o == total ? nil : bad(i, "\(o) bytes decoded, \(total) declared")
        }
        if let failure { throw failure }
        return out
    }
}
