/// gzip decompression (RFC 1952) over the engine's own inflate: each member's header (`FEXTRA`,
/// `FNAME`, `FCOMMENT` and `FHCRC` fields skipped or checked), its DEFLATE stream (`Inflater`),
/// and its trailer — CRC-32 and length mod 2³², both verified. Several members one after another
/// are one stream (what `cat a.gz b.gz` makes), as gzip itself reads them. Parquet's `GZIP` codec.
///
///     let page = try Gzip.decompress(body, maximumOutputSize: 1 << 30, expectedSize: length)
///
/// Any input gives bytes or a `CodecError` naming the byte; the output never passes the caller's
/// bound.
public enum Gzip {
    static let name = "gzip"

    /// Decodes every member of `input`.
    /// - Parameters:
    ///   - input: the compressed bytes.
    ///   - maximumOutputSize: The most bytes the output may hold.
    ///   - expectedSize: When given, the output must be exactly this long.
    public static func decompress(
        _ input: UnsafeRawBufferPointer, maximumOutputSize: Int,
        expectedSize: Int? = nil
    ) throws(CodecError) -> [UInt8] {
        // DEFLATE expands at most 1032:1; a larger expected size is refused before it is allocated.
        let (scaled, overflow) = input.count.multipliedReportingOverflow(by: 1_032)
        let possible = overflow ? Int.max : scaled + 1_024
        if let expectedSize, expectedSize > possible {
            throw .malformed(codec: name, offset: 0, detail: "\(input.count) bytes cannot decode to the \(expectedSize) expected")
        }
        let limit = Swift.max(0, Swift.min(possible, expectedSize.map { Swift.min($0, maximumOutputSize) } ?? maximumOutputSize))
        let output = GrowingBytes(
            limit: limit, initial: expectedSize ?? Swift.min(limit, Swift.max(64 << 10, input.count * 4)), codec: name)
        var p = 0
        repeat {
            p = try decodeMember(input, at: p, into: output)
        } while p < input.count
        let bytes = output.finish()
        if let expectedSize, bytes.count != expectedSize { throw .sizeMismatch(codec: name, expected: expectedSize, actual: bytes.count) }
        return bytes
    }

    /// One member from `start`; returns the offset after its trailer.
    private static func decodeMember(_ input: UnsafeRawBufferPointer, at start: Int, into output: GrowingBytes) throws(CodecError) -> Int {
        var p = start
        guard input.count - p >= 10 else { throw .truncated(codec: name, offset: p, needed: 10 - (input.count - p)) }
        guard input[p] == 0x1F, input[p + 1] == 0x8B else {
            throw .malformed(codec: name, offset: p, detail: "not a gzip member (no 1F 8B)")
        }
        guard input[p + 2] == 8 else {
            throw .malformed(codec: name, offset: p + 2, detail: "compression method \(input[p + 2]), only 8 (deflate) exists")
        }
        let flags = input[p + 3]
        guard flags & 0xE0 == 0 else { throw .malformed(codec: name, offset: p + 3, detail: "reserved flag bits are set") }
        p += 10
        if flags & 0x04 != 0 {  // FEXTRA
            guard input.count - p >= 2 else { throw .truncated(codec: name, offset: p, needed: 2) }
            let length = Int(input[p]) | Int(input[p + 1]) << 8
            guard length <= input.count - p - 2 else { throw .truncated(codec: name, offset: p + 2, needed: length) }
            p += 2 + length
        }
        for flag: UInt8 in [0x08, 0x10] where flags & flag != 0 {  // FNAME, FCOMMENT: zero-terminated
            while true {
                guard p < input.count else { throw .truncated(codec: name, offset: p, needed: 1) }
                p += 1
                if input[p - 1] == 0 { break }
            }
        }
        if flags & 0x02 != 0 {  // FHCRC: the low 16 bits of the header's CRC-32
            guard input.count - p >= 2 else { throw .truncated(codec: name, offset: p, needed: 2) }
            let stored = UInt32(input[p]) | UInt32(input[p + 1]) << 8
            let actual = CRC32.checksum(UnsafeRawBufferPointer(rebasing: input[start ..< p])) & 0xFFFF
            guard stored == actual else {
                throw .checksumMismatch(codec: name, offset: p, what: "header", expected: stored, actual: actual)
            }
            p += 2
        }
        // The DEFLATE stream, into a buffer of its own (a member's matches may not reach into the
        // member before it), growing until the stream ends.
        let stream = UnsafeRawBufferPointer(rebasing: input[p...])
        var inflater = Inflater(stream)
        let room = output.limit - output.count
        var capacity = Swift.min(Swift.max(Inflater.minimumSpace * 4, stream.count * 4), room + Inflater.minimumSpace)
        var buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        defer { buffer.deallocate() }
        var o = 0
        while !inflater.isFinished {
            if capacity - o < Inflater.minimumSpace {
                guard o <= room else { throw .tooLarge(codec: name, limit: output.limit) }
                let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity * 2)
                grown.update(from: buffer, count: o)
                buffer.deallocate()
                buffer = grown
                capacity *= 2
            }
            do {
                o = try inflater.inflate(into: buffer, from: o, capacity: capacity)
            } catch {
                throw .malformed(codec: name, offset: p + error.offset, detail: error.reason)
            }
            if o > room { throw .tooLarge(codec: name, limit: output.limit) }
        }
        p += inflater.consumedCount
        guard input.count - p >= 8 else { throw .truncated(codec: name, offset: p, needed: 8 - (input.count - p)) }
        let crc = UInt32(littleEndian: input.loadUnaligned(fromByteOffset: p, as: UInt32.self))
        let size = UInt32(littleEndian: input.loadUnaligned(fromByteOffset: p + 4, as: UInt32.self))
        let member = UnsafeRawBufferPointer(start: buffer, count: o)
        let actual = CRC32.checksum(member)
        guard crc == actual else { throw .checksumMismatch(codec: name, offset: p, what: "member CRC-32", expected: crc, actual: actual) }
        guard size == UInt32(truncatingIfNeeded: o) else {
            throw .malformed(codec: name, offset: p + 4, detail: "the trailer says \(size) bytes (mod 2^32), the member holds \(o)")
        }
        try output.append(member)
        return p + 8
    }
}
