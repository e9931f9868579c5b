/// LZ4 decompression in the three forms quote files use, written from the LZ4 block and frame
/// format specifications (lz4's `doc/lz4_Block_format.md`, `doc/lz4_Frame_format.md`):
///
/// - `decompressBlock`: one raw block (Parquet `LZ4_RAW`).
/// - `decompressFrame`: the LZ4 frame format (Arrow IPC `LZ4_FRAME` body compression): frames,
///   skippable frames, linked and independent blocks of 64 KB–4 MB, uncompressed blocks, block
///   and content checksums (XXH32) verified when present, the header checksum always; a frame
///   that names a dictionary is refused.
/// - `decompressHadoop`: Parquet's deprecated `LZ4` codec: Hadoop's framing (big-endian
///   uncompressed and compressed lengths, then a block, repeated), falling back to one raw block
///   when the bytes are not so framed, as Arrow C++ does.
///
///     let bytes = try LZ4.decompressFrame(input, maximumOutputSize: 1 << 30)
///
/// Every read and every match is bounds-checked: any input gives bytes or a `CodecError` naming
/// the offset, never a crash; the output never passes the caller's bound, so work is bounded by
/// input size plus that bound.
public enum LZ4 {
    static let name = "LZ4"

    // MARK: Blocks

    /// Decodes one raw block into `output[start...]`, which holds `capacity` bytes; a match may
    /// reach back to `historyStart` (0 for linked blocks: all earlier output; `start` for an
    /// independent block).
    ///
    /// Two loops: while at least `fastInput` bytes of input and `fastOutput` bytes of output room
    /// are left, a sequence's short literals and its match are moved in whole 8-byte words (which
    /// may write up to 15 bytes past the sequence, never past `capacity`: the next sequence
    /// overwrites them); every length, offset and room is still checked once per sequence. The
    /// last sequences, near either end, go through the byte-exact loop.
    /// - Returns: The end of the output (`start` plus the bytes written).
    /// - Throws: `CodecError` at the block's byte (`inputOffset` added) for a malformed block, or
    ///   `.tooLarge` when the output would pass `capacity`.
    /// - Complexity: O(input + output).
    static func decodeBlock(
        _ input: UnsafeRawBufferPointer, inputOffset: Int = 0,
        into output: UnsafeMutablePointer<UInt8>, start: Int, capacity: Int,
        historyStart: Int
    ) throws(CodecError) -> Int {
        guard let src = input.baseAddress?.assumingMemoryBound(to: UInt8.self), input.count > 0 else {
            throw .truncated(codec: name, offset: inputOffset, needed: 1)
        }
        let end = input.count
        var i = 0, o = start
        // Fast loop. At its top: at least `fastInput` bytes of input from `i` and `fastOutput`
        // bytes of room from `o`. Offsets and lengths stay far below Int.max (each is bounded by
        // the input's or the output's size before it is added), so they add without overflow
        // checks.
        while end &- i >= fastInput && capacity &- o >= fastOutput {
            let token = src[i]
            i &+= 1
            var literals = Int(token &>> 4)
            if literals < 15 {
                // Safe: 16 bytes are readable from i (fastInput - 1 > 16 are left) and writable at
                // o (fastOutput > 16).
                copy16(from: src + i, to: output + o)
            } else {
                literals = try extendedLength(literals, src, &i, end: end, bound: end, limit: nil, inputOffset: inputOffset)
                guard literals <= end &- i else { throw .truncated(codec: name, offset: inputOffset + i, needed: literals) }
                guard literals <= capacity &- o else { throw .tooLarge(codec: name, limit: capacity - start) }
                // Safe: literals bytes remain in the input and fit in the output.
                (output + o).update(from: src + i, count: literals)
            }
            i &+= literals
            o &+= literals
            if i == end { return o }  // the last sequence has literals only
            guard end &- i >= 2 else { throw .truncated(codec: name, offset: inputOffset + i, needed: 2) }
            // Safe: two bytes remain.
            let distance = Int(UInt16(littleEndian: UnsafeRawPointer(src + i).loadUnaligned(as: UInt16.self)))
            i &+= 2
            guard distance > 0 else { throw .malformed(codec: name, offset: inputOffset + i - 2, detail: "a match offset of 0") }
            guard distance <= o &- historyStart else { throw badDistance(distance, o - historyStart, at: inputOffset + i - 2) }
            var length = Int(token & 15)
            if length < 15 {
                length &+= 4
                if distance >= 8 && capacity &- o >= 24 {
                    // The common short match: three words, each read at least 8 bytes behind
                    // where it is written. Safe: 24 bytes of room, the source is output.
                    let d = UnsafeMutableRawPointer(output + o), from = UnsafeRawPointer(output + o - distance)
                    d.storeBytes(of: from.loadUnaligned(as: UInt64.self), as: UInt64.self)
                    (d + 8).storeBytes(of: from.loadUnaligned(fromByteOffset: 8, as: UInt64.self), as: UInt64.self)
                    (d + 16).storeBytes(of: from.loadUnaligned(fromByteOffset: 16, as: UInt64.self), as: UInt64.self)
                    o &+= length
                    continue
                }
            } else {
                length =
                    try extendedLength(length, src, &i, end: end, bound: capacity, limit: capacity - start, inputOffset: inputOffset) &+ 4
            }
            guard length <= capacity &- o else { throw .tooLarge(codec: name, limit: capacity - start) }
            if capacity &- o &- length >= 16 {
                // Safe: the match and 15 bytes past it lie below capacity; its source lies in
                // the output (checked above).
                copyMatchWide(output + o, distance: distance, length: length)
            } else {
                copyMatch(output + o, distance: distance, length: length)
            }
            o &+= length
        }
        // Byte-exact loop for the rest.
        while true {
            // A block ends with literals: one that ends right after a match is cut short
            // (LZ4Gzip fuzz finding 13: the next token was read past the input).
            guard i < end else { throw .truncated(codec: name, offset: inputOffset + i, needed: 1) }
            let token = src[i]
            i += 1
            // Literals.
            var literals = Int(token >> 4)
            if literals == 15 {
                while true {
                    guard i < end else { throw .truncated(codec: name, offset: inputOffset + i, needed: 1) }
                    let b = src[i]
                    i += 1
                    literals += Int(b)
                    // A length past the input cannot be real; stop before it grows without bound.
                    if literals > end {
                        throw .malformed(codec: name, offset: inputOffset + i - 1, detail: "a literal length past the block")
                    }
                    if b != 255 { break }
                }
            }
            guard literals <= end - i else { throw .truncated(codec: name, offset: inputOffset + i, needed: literals) }
            guard literals <= capacity - o else { throw .tooLarge(codec: name, limit: capacity - start) }
            // Safe: literals bytes remain in the input and fit in the output.
            (output + o).update(from: src + i, count: literals)
            i += literals
            o += literals
            // The last sequence has literals only.
            if i == end { return o }
            guard end - i >= 2 else { throw .truncated(codec: name, offset: inputOffset + i, needed: 2) }
            let distance = Int(src[i]) | Int(src[i + 1]) << 8
            i += 2
            guard distance > 0 else { throw .malformed(codec: name, offset: inputOffset + i - 2, detail: "a match offset of 0") }
            guard distance <= o - historyStart else { throw badDistance(distance, o - historyStart, at: inputOffset + i - 2) }
            var length = Int(token & 15)
            if length == 15 {
                while true {
                    guard i < end else { throw .truncated(codec: name, offset: inputOffset + i, needed: 1) }
                    let b = src[i]
                    i += 1
                    length += Int(b)
                    if length > capacity { throw .tooLarge(codec: name, limit: capacity - start) }
                    if b != 255 { break }
                }
            }
            length += 4
            guard length <= capacity - o else { throw .tooLarge(codec: name, limit: capacity - start) }
            copyMatch(output + o, distance: distance, length: length)
            o += length
        }
    }

    /// A length whose 4-bit code was 15: adds the bytes that follow (each 255 but the last).
    /// - Throws: `.truncated` at the input's end; once the length passes `bound` (it cannot be
    ///   real, and stops growing there): `.tooLarge` with `limit` for a match (the output's
    ///   room), `.malformed` for literals (`limit` nil: the input's size).
    @inline(__always)
    private static func extendedLength(
        _ initial: Int, _ src: UnsafePointer<UInt8>, _ i: inout Int, end: Int, bound: Int, limit: Int?, inputOffset: Int
    ) throws(CodecError) -> Int {
        var length = initial
        while true {
            guard i < end else { throw .truncated(codec: name, offset: inputOffset + i, needed: 1) }
            let b = src[i]
            i &+= 1
            length &+= Int(b)
            if length > bound {
                if let limit { throw .tooLarge(codec: name, limit: limit) }
                throw .malformed(codec: name, offset: inputOffset + i - 1, detail: "a literal length past the block")
            }
            if b != 255 { return length }
        }
    }

    /// Input and output room that let the fast loop move a sequence in whole words: a token, 15
    /// literals read as 16, a 2-byte offset; 15 literals written as 16 and a match overshooting
    /// by up to 15.
    static let fastInput = 32, fastOutput = 64

    @inline(never)
    private static func badDistance(_ distance: Int, _ available: Int, at offset: Int) -> CodecError {
        .malformed(
            codec: name, offset: offset,
            detail: "a match offset of \(distance) reaches before the start of the data (\(available) bytes back)")
    }

    /// Copies 16 bytes as two unaligned words.
    @inline(__always)
    static func copy16(from source: UnsafePointer<UInt8>, to destination: UnsafeMutablePointer<UInt8>) {
        let s = UnsafeRawPointer(source), d = UnsafeMutableRawPointer(destination)
        d.storeBytes(of: s.loadUnaligned(as: UInt64.self), as: UInt64.self)
        (d + 8).storeBytes(of: s.loadUnaligned(fromByteOffset: 8, as: UInt64.self), as: UInt64.self)
    }

    /// Copies a match of `length` bytes from `distance` back in 8-byte words, writing up to 15
    /// bytes past its end (the pattern's lead of at most 7 bytes, then 16-byte steps while short
    /// of the end). A distance below 8 first repeats its pattern byte by byte until the
    /// period is a multiple of it of at least 8 (any multiple of a period is a period), so every
    /// word is read at least 8 bytes behind where it is written.
    /// - Precondition: `distance >= 1`, `dst - distance` is output, `dst + length + 15` writable.
    @inline(__always)
    static func copyMatchWide(_ dst: UnsafeMutablePointer<UInt8>, distance: Int, length: Int) {
        var out = dst
        let end = dst + length
        var period = distance
        if period < 8 {
            let multiple = period * ((8 + period - 1) / period)
            for _ in 0 ..< multiple - period {
                out.pointee = (out - period).pointee
                out += 1
            }
            period = multiple
        }
        while out < end {
            let raw = UnsafeMutableRawPointer(out)
            let from = UnsafeRawPointer(out - period)
            raw.storeBytes(of: from.loadUnaligned(as: UInt64.self), as: UInt64.self)
            (raw + 8).storeBytes(of: from.loadUnaligned(fromByteOffset: 8, as: UInt64.self), as: UInt64.self)
            out += 16
        }
    }

    /// Copies `length` bytes from `distance` back, byte order preserved for overlapping matches
    /// (a distance below the length repeats the pattern).
    @inline(__always)
    static func copyMatch(_ dst: UnsafeMutablePointer<UInt8>, distance: Int, length: Int) {
        let src = dst - distance
        if distance >= length {
            // Safe: the ranges do not overlap.
            dst.update(from: src, count: length)
        } else if distance >= 8 {
            var k = 0
            while k < length {
                let n = Swift.min(distance, length - k)
                (dst + k).update(from: src + k, count: n)
                k += n
            }
        } else {
            for k in 0 ..< length { dst[k] = src[k] }
        }
    }

    /// One raw LZ4 block (Parquet `LZ4_RAW`) that decodes to exactly `expectedSize` bytes.
    /// - Throws: `CodecError`; `.sizeMismatch` when the block decodes to another size.
    public static func decompressBlock(_ input: UnsafeRawBufferPointer, expectedSize: Int) throws(CodecError) -> [UInt8] {
        guard expectedSize >= 0 else { throw .sizeMismatch(codec: name, expected: expectedSize, actual: 0) }
        if input.isEmpty && expectedSize == 0 { return [] }
        // A sequence of k bytes yields at most about 255 k: a larger claim is a lie, refused before
        // anything is allocated for it.
        guard expectedSize <= Self.maximumExpansion(input.count) else {
            throw .malformed(codec: name, offset: 0, detail: "\(input.count) bytes cannot decode to the \(expectedSize) expected")
        }
        var failure: CodecError?
        let out = [UInt8](unsafeUninitializedCapacity: Swift.max(expectedSize, 1)) { buffer, count in
            do throws(CodecError) {
                count = try decodeBlock(input, into: buffer.baseAddress!, start: 0, capacity: expectedSize, historyStart: 0)
            } catch {
                failure = error
                count = 0
            }
        }
        if let failure {
            if case .tooLarge = failure { throw .sizeMismatch(codec: name, expected: expectedSize, actual: expectedSize + 1) }
            throw failure
        }
        guard out.count == expectedSize else { throw .sizeMismatch(codec: name, expected: expectedSize, actual: out.count) }
        return out
    }

    /// The most `count` bytes of LZ4 can decode to (a generous bound on the format's 255:1).
    static func maximumExpansion(_ count: Int) -> Int {
        let (scaled, overflow) = count.multipliedReportingOverflow(by: 256)
        return overflow ? Int.max : scaled + 64
    }

    // MARK: Frames

    static let frameMagic: UInt32 = 0x184D_2204

    /// Decodes every frame in `input` (LZ4 frames and skippable frames, one after another).
    /// - Parameters:
    ///   - input: the compressed bytes.
    ///   - maximumOutputSize: The most bytes the whole output may hold.
    ///   - expectedSize: When given, the output must be exactly this long (Arrow gives it).
    /// - Throws: `CodecError` naming the byte.
    public static func decompressFrame(
        _ input: UnsafeRawBufferPointer, maximumOutputSize: Int,
        expectedSize: Int? = nil
    ) throws(CodecError) -> [UInt8] {
        let capacity = Swift.max(
            0,
            Swift.min(
                expectedSize.map { Swift.min($0, maximumOutputSize) } ?? maximumOutputSize,
                maximumExpansion(input.count)))
        if let expectedSize, expectedSize <= capacity {
            // The size is known: decode straight into the array, no copy at the end.
            var failure: CodecError?
            let bytes = [UInt8](unsafeUninitializedCapacity: Swift.max(expectedSize, 1)) { buffer, count in
                do throws(CodecError) {
                    count = try decodeFrames(input, into: GrowingBytes(borrowing: buffer.baseAddress!, capacity: expectedSize))
                } catch {
                    failure = error
                    count = 0
                }
            }
            if let failure { throw failure }
            guard bytes.count == expectedSize else { throw .sizeMismatch(codec: name, expected: expectedSize, actual: bytes.count) }
            return bytes
        }
        let output = GrowingBytes(limit: capacity, initial: Swift.min(capacity, Swift.max(64 << 10, input.count * 4)))
        _ = try decodeFrames(input, into: output)
        let bytes = output.finish()
        if let expectedSize, bytes.count != expectedSize { throw .sizeMismatch(codec: name, expected: expectedSize, actual: bytes.count) }
        return bytes
    }

    /// Decodes every frame in `input` into the caller's `destination`, which bounds the output.
    /// - Returns: The bytes written.
    /// - Throws: `CodecError` naming the byte; `.tooLarge` when the frames hold more than
    ///   `destination.count` bytes.
    public static func decompressFrame(
        _ input: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer
    ) throws(CodecError)
        -> Int
    {
        guard let base = destination.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
            var none: UInt8 = 0
            return try decodeFrames(input, into: GrowingBytes(borrowing: &none, capacity: 0))
        }
        return try decodeFrames(input, into: GrowingBytes(borrowing: base, capacity: destination.count))
    }

    /// Decodes every frame of `input` onto `output`; returns the bytes it then holds.
    private static func decodeFrames(_ input: UnsafeRawBufferPointer, into output: GrowingBytes) throws(CodecError) -> Int {
        var p = 0
        var frames = 0
        while p < input.count {
            guard input.count - p >= 4 else { throw .truncated(codec: name, offset: p, needed: 4) }
            let magic = read32(input, p)
            if magic & 0xFFFF_FFF0 == 0x184D_2A50 {
                guard input.count - p >= 8 else { throw .truncated(codec: name, offset: p + 4, needed: 4) }
                let size = Int(read32(input, p + 4))
                guard size <= input.count - p - 8 else { throw .truncated(codec: name, offset: p + 8, needed: size) }
                p += 8 + size
                continue
            }
            guard magic == frameMagic else {
                throw .malformed(
                    codec: name, offset: p, detail: frames == 0 ? "not an LZ4 frame (no magic number)" : "bytes after the last frame")
            }
            p = try decodeFrame(input, at: p + 4, into: output)
            frames += 1
        }
        guard frames > 0 else { throw .malformed(codec: name, offset: 0, detail: "no LZ4 frame") }
        return output.count
    }

    /// One frame after its magic number; returns the offset after it.
    private static func decodeFrame(_ input: UnsafeRawBufferPointer, at start: Int, into output: GrowingBytes) throws(CodecError) -> Int {
        var p = start
        guard input.count - p >= 3 else { throw .truncated(codec: name, offset: p, needed: 3) }
        let flags = input[p], bd = input[p + 1]
        guard flags >> 6 == 1 else { throw .malformed(codec: name, offset: p, detail: "frame version \(flags >> 6), expected 1") }
        guard flags & 0x02 == 0, bd & 0x8F == 0 else {
            throw .malformed(codec: name, offset: p, detail: "reserved bits of the frame descriptor are set")
        }
        let independent = flags & 0x20 != 0, blockChecksums = flags & 0x10 != 0
        let hasContentSize = flags & 0x08 != 0, contentChecksum = flags & 0x04 != 0, hasDictionary = flags & 0x01 != 0
        let sizeCode = Int(bd >> 4)
        guard sizeCode >= 4 else {
            throw .malformed(codec: name, offset: p + 1, detail: "block maximum size code \(sizeCode) (4…7 allowed)")
        }
        let blockMaximum = 1 << (8 + 2 * sizeCode)  // 64 KB, 256 KB, 1 MB, 4 MB
        let descriptorLength = 2 + (hasContentSize ? 8 : 0) + (hasDictionary ? 4 : 0)
        guard input.count - p >= descriptorLength + 1 else { throw .truncated(codec: name, offset: p, needed: descriptorLength + 1) }
        let descriptor = UnsafeRawBufferPointer(rebasing: input[p ..< p + descriptorLength])
        let headerChecksum = UInt8(truncatingIfNeeded: XXHash32.hash(descriptor) >> 8)
        if headerChecksum != input[p + descriptorLength] {
            throw .checksumMismatch(
                codec: name, offset: p + descriptorLength, what: "frame header",
                expected: UInt32(input[p + descriptorLength]), actual: UInt32(headerChecksum))
        }
        if hasDictionary {
            throw .malformed(
                codec: name, offset: p + 2 + (hasContentSize ? 8 : 0), detail: "the frame needs a dictionary, which Colonnade does not have"
            )
        }
        let contentSize: UInt64? = hasContentSize ? read64(input, p + 2) : nil
        p += descriptorLength + 1
        let frameStart = output.count
        if let contentSize, contentSize > UInt64(output.limit - frameStart) { throw .tooLarge(codec: name, limit: output.limit) }
        if let contentSize { output.reserve(Int(contentSize)) }
        var content = contentChecksum ? XXHash32() : nil
        while true {
            guard input.count - p >= 4 else { throw .truncated(codec: name, offset: p, needed: 4) }
            let word = read32(input, p)
            p += 4
            if word == 0 { break }  // EndMark
            let stored = word & 0x8000_0000 != 0
            let size = Int(word & 0x7FFF_FFFF)
            guard size <= blockMaximum else {
                throw .malformed(codec: name, offset: p - 4, detail: "a block of \(size) bytes, past the frame's \(blockMaximum)")
            }
            guard size <= input.count - p else { throw .truncated(codec: name, offset: p, needed: size) }
            let block = UnsafeRawBufferPointer(rebasing: input[p ..< p + size])
            if blockChecksums {
                guard input.count - p - size >= 4 else { throw .truncated(codec: name, offset: p + size, needed: 4) }
                let expected = read32(input, p + size), actual = XXHash32.hash(block)
                guard expected == actual else {
                    throw .checksumMismatch(codec: name, offset: p + size, what: "block", expected: expected, actual: actual)
                }
            }
            let before = output.count
            if stored {
                try output.append(block)
            } else {
                output.reserve(blockMaximum)
                let history = independent ? before : frameStart
                let room = Swift.min(output.limit, before + blockMaximum)
                var failure: CodecError?
                output.withUnsafeMutableStorage { base, count in
                    do throws(CodecError) {
                        count = try decodeBlock(block, inputOffset: p, into: base, start: count, capacity: room, historyStart: history)
                    } catch {
                        failure = error
                    }
                }
                if let failure {
                    if case .tooLarge = failure { throw .tooLarge(codec: name, limit: output.limit) }
                    throw failure
                }
            }
            if content != nil { output.withBytes(from: before) { content!.update($0) } }
            p += size + (blockChecksums ? 4 : 0)
        }
        if let contentSize, UInt64(output.count - frameStart) != contentSize {
            throw .malformed(
                codec: name, offset: start, detail: "the frame holds \(output.count - frameStart) bytes, its header says \(contentSize)")
        }
        if let content {
            guard input.count - p >= 4 else { throw .truncated(codec: name, offset: p, needed: 4) }
            let expected = read32(input, p), actual = content.finalize()
            guard expected == actual else {
                throw .checksumMismatch(codec: name, offset: p, what: "content", expected: expected, actual: actual)
            }
            p += 4
        }
        return p
    }

    // MARK: Hadoop

    /// Parquet's deprecated `LZ4` codec: Hadoop's framing — a big-endian uncompressed length, a
    /// big-endian compressed length, one block, repeated — or, when the bytes are not so framed,
    /// one raw block (what older writers produced; Arrow C++ tries both the same way).
    public static func decompressHadoop(_ input: UnsafeRawBufferPointer, expectedSize: Int) throws(CodecError) -> [UInt8] {
        if let framed = try? hadoopFramed(input, expectedSize: expectedSize) { return framed }
        return try decompressBlock(input, expectedSize: expectedSize)
    }

    private static func hadoopFramed(_ input: UnsafeRawBufferPointer, expectedSize: Int) throws(CodecError) -> [UInt8] {
        let output = GrowingBytes(limit: expectedSize, initial: expectedSize)
        var p = 0
        while p < input.count {
            guard input.count - p >= 8 else { throw .truncated(codec: name, offset: p, needed: 8) }
            let uncompressed = Int(UInt32(bigEndian: input.loadUnaligned(fromByteOffset: p, as: UInt32.self)))
            let compressed = Int(UInt32(bigEndian: input.loadUnaligned(fromByteOffset: p + 4, as: UInt32.self)))
            p += 8
            guard compressed <= input.count - p, uncompressed <= output.limit - output.count else {
                throw .malformed(codec: name, offset: p - 8, detail: "not Hadoop-framed")
            }
            let block = try decompressBlock(UnsafeRawBufferPointer(rebasing: input[p ..< p + compressed]), expectedSize: uncompressed)
            try output.append(block)
            p += compressed
        }
        guard output.count == expectedSize else { throw .sizeMismatch(codec: name, expected: expectedSize, actual: output.count) }
        return output.finish()
    }

    // MARK: Bytes

    @inline(__always) static func read32(_ b: UnsafeRawBufferPointer, _ at: Int) -> UInt32 {
        UInt32(littleEndian: b.loadUnaligned(fromByteOffset: at, as: UInt32.self))
    }

    @inline(__always) static func read64(_ b: UnsafeRawBufferPointer, _ at: Int) -> UInt64 {
        UInt64(littleEndian: b.loadUnaligned(fromByteOffset: at, as: UInt64.self))
    }
}

/// An output buffer that grows by doubling up to a hard `limit` (past it: `CodecError.tooLarge`);
/// freed when the last reference goes, so an error thrown midway leaks nothing. Or the caller's
/// memory of a fixed size, which is its limit and is never grown or freed.
final class GrowingBytes {
    private var base: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private(set) var count = 0
    let limit: Int
    /// The codec named in `tooLarge`.
    let codec: String
    private let owned: Bool

    init(limit: Int, initial: Int, codec: String = "LZ4") {
        self.codec = codec
        self.limit = Swift.max(0, limit)
        capacity = Swift.max(16, Swift.min(Swift.max(0, initial), self.limit))
        base = .allocate(capacity: capacity)
        owned = true
    }

    /// The caller's `capacity` bytes at `base`, which outlive this object.
    init(borrowing base: UnsafeMutablePointer<UInt8>, capacity: Int, codec: String = "LZ4") {
        self.codec = codec
        self.base = base
        self.capacity = Swift.max(0, capacity)
        limit = self.capacity
        owned = false
    }

    deinit { if owned { base.deallocate() } }

    /// Room for `n` more bytes (capped at the limit).
    func reserve(_ n: Int) {
        let want = Swift.min(limit, count + Swift.max(0, n))
        guard owned, want > capacity else { return }
        var next = capacity
        while next < want { next = Swift.min(limit, next * 2) }
        let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: next)
        grown.update(from: base, count: count)
        base.deallocate()
        base = grown
        capacity = next
    }

    func append(_ bytes: UnsafeRawBufferPointer) throws(CodecError) {
        guard bytes.count <= limit - count else { throw .tooLarge(codec: codec, limit: limit) }
        reserve(bytes.count)
        if let src = bytes.baseAddress, bytes.count > 0 {
            (UnsafeMutableRawPointer(base) + count).copyMemory(from: src, byteCount: bytes.count)
        }
        count += bytes.count
    }

    func append(_ bytes: [UInt8]) throws(CodecError) {
        guard bytes.count <= limit - count else { throw .tooLarge(codec: codec, limit: limit) }
        reserve(bytes.count)
        bytes.withUnsafeBufferPointer { (base + count).update(from: $0.baseAddress!, count: $0.count) }
        count += bytes.count
    }

    /// `body(base, &count)` may write past `count` up to the reserved capacity.
    func withUnsafeMutableStorage(_ body: (UnsafeMutablePointer<UInt8>, inout Int) -> Void) {
        var n = count
        body(base, &n)
        precondition(n <= capacity, "wrote past the reserved capacity")
        count = n
    }

    func withBytes(from start: Int, _ body: (UnsafeRawBufferPointer) -> Void) {
        body(UnsafeRawBufferPointer(start: base + start, count: count - start))
    }

    /// A copy of the bytes.
    func finish() -> [UInt8] { Array(UnsafeBufferPointer(start: base, count: count)) }
}
