import Foundation

/// The state of one decompression: the input, and what a frame's blocks carry from one to the
/// next (repeat offsets, the last Huffman table, the last sequence tables).
struct ZstdDecoder {
    /// The most bytes a block may decode to (and hold compressed), RFC 8878 §3.1.1.2.3.
    static let maximumBlockSize = 128 * 1024

    let base: UnsafeRawPointer
    let count: Int

    /// The three most recent offsets, newest first.
    var repeatOffsets = (1, 4, 8)
    var huffman: ZstdHuffmanTable?
    var literalLengths: ZstdSequenceTable?
    var matchLengths: ZstdSequenceTable?
    var offsets: ZstdSequenceTable?
    /// Where Huffman and RLE literals are decoded (`maximumBlockSize` plus slack), made on first use.
    var scratch: UnsafeMutablePointer<UInt8>?
    /// The block's three sequence tables side by side for the fast loop (`ZstdFastSequences`),
    /// made on first use.
    var combinedTables: UnsafeMutablePointer<ZstdSequenceTable.Entry>?

    /// Whether sequences go through `ZstdFastSequences` (false: every sequence through the checked
    /// path, which tests compare it with).
    var usesFastLoop = true

    /// The current frame: the output's count when it started, its window and block limit.
    var frameStart = 0
    var windowSize = 0
    var blockLimit = 0

    init(base: UnsafeRawPointer, count: Int) {
        self.base = base
        self.count = count
    }

    mutating func release() {
        scratch?.deallocate()
        scratch = nil
        combinedTables?.deallocate()
        combinedTables = nil
    }

    // MARK: Reading the input

    @inline(__always)
    func byte(_ offset: Int) -> Int {
        // Safe: callers check offset < count first (`need`).
        Int(base.load(fromByteOffset: offset, as: UInt8.self))
    }

    /// A little-endian integer of `size` (0...8) bytes at `offset`.
    func littleEndian(_ offset: Int, size: Int) -> UInt64 {
        var value: UInt64 = 0
        for i in 0 ..< size { value |= UInt64(byte(offset + i)) << (8 * i) }
        return value
    }

    /// Throws `truncated` unless `size` bytes from `offset` lie in the input.
    @inline(__always)
    func need(_ size: Int, at offset: Int) throws(ZstdError) {
        if size > count - offset { throw .truncated(offset: count, needed: size - (count - offset)) }
    }

    // MARK: Frames

    /// Decodes the frame or skips the skippable frame at `start`.
    /// - Returns: the offset after it.
    mutating func decodeFrameOrSkip(at start: Int, into output: inout ZstdOutputBuffer) throws(ZstdError) -> Int {
        try need(4, at: start)
        let magic = UInt32(littleEndian(start, size: 4))
        if magic & 0xFFFF_FFF0 == 0x184D_2A50 {
            try need(8, at: start)
            let size = Int(littleEndian(start + 4, size: 4))
            try need(size, at: start + 8)
            return start + 8 + size
        }
        guard magic == 0xFD2F_B528 else {
            throw .malformed(
                offset: start, detail: "not a Zstandard frame (magic number 0x\(String(magic, radix: 16)), expected 0xfd2fb528)")
        }
        return try decodeFrame(at: start, into: &output)
    }

    private mutating func decodeFrame(at start: Int, into output: inout ZstdOutputBuffer) throws(ZstdError) -> Int {
        var position = start + 4
        try need(1, at: position)
        let descriptor = byte(position)
        position += 1
        let contentSizeFlag = descriptor >> 6
        let singleSegment = descriptor & 0x20 != 0
        guard descriptor & 0x08 == 0 else {
            throw .malformed(offset: start + 4, detail: "a frame header with the reserved bit set")
        }
        let hasChecksum = descriptor & 0x04 != 0
        let dictionaryIDSize = [0, 1, 2, 4][descriptor & 3]
        let contentSizeSize = [singleSegment ? 1 : 0, 2, 4, 8][contentSizeFlag]
        try need((singleSegment ? 0 : 1) + dictionaryIDSize + contentSizeSize, at: position)
        var window: UInt64 = 0
        if !singleSegment {
            let descriptorByte = byte(position)
            let exponent = UInt64(descriptorByte >> 3), mantissa = UInt64(descriptorByte & 7)
            let windowBase: UInt64 = 1 << (10 + exponent)
            window = windowBase + (windowBase / 8) * mantissa
            position += 1
        }
        if dictionaryIDSize > 0 {
            let id = UInt32(littleEndian(position, size: dictionaryIDSize))
            if id != 0 { throw .dictionaryNotSupported(offset: start, dictionaryID: id) }
            position += dictionaryIDSize
        }
        var contentSize: UInt64?
        if contentSizeSize > 0 {
            contentSize = littleEndian(position, size: contentSizeSize) + (contentSizeSize == 2 ? 256 : 0)
            position += contentSizeSize
        }
        if singleSegment, let contentSize { window = contentSize }
        guard window <= UInt64(Zstd.maximumWindowSize) else {
            throw .windowTooLarge(offset: start, windowSize: window, limit: Zstd.maximumWindowSize)
        }
        windowSize = Int(window)
        blockLimit = min(windowSize, Self.maximumBlockSize)
        frameStart = output.count
        if let contentSize {
            guard contentSize <= UInt64(output.limit - output.count) else { throw .tooLarge(offset: start, limit: output.limit) }
            output.reserve(total: output.count + Int(contentSize))
        }
        repeatOffsets = (1, 4, 8)
        huffman = nil
        literalLengths = nil
        matchLengths = nil
        offsets = nil

        while true {
            try need(3, at: position)
            let header = Int(littleEndian(position, size: 3))
            let blockStart = position
            position += 3
            let isLast = header & 1 != 0
            let size = header >> 3
            switch (header >> 1) & 3 {
            case 0:
                guard size <= blockLimit else { throw blockTooLarge(blockStart, size) }
                try need(size, at: position)
                try ensureRoom(size, in: &output, at: blockStart)
                if size > 0 {
                    // Safe: `need` and `ensureRoom` checked both ranges.
                    (output.base! + output.count).update(from: (base + position).assumingMemoryBound(to: UInt8.self), count: size)
                }
                output.count += size
                position += size
            case 1:
                guard size <= blockLimit else { throw blockTooLarge(blockStart, size) }
                try need(1, at: position)
                try ensureRoom(size, in: &output, at: blockStart)
                if size > 0 {
                    // Safe: `ensureRoom` checked the range.
                    (output.base! + output.count).initialize(repeating: UInt8(byte(position)), count: size)
                }
                output.count += size
                position += 1
            case 2:
                guard size <= blockLimit else { throw blockTooLarge(blockStart, size) }
                try need(size, at: position)
                output.reserve(total: output.count + blockLimit)
                try decodeCompressedBlock(start: position, end: position + size, into: &output)
                position += size
            default:
                throw .malformed(offset: blockStart, detail: "a block of reserved type 3")
            }
            if let contentSize, UInt64(output.count - frameStart) > contentSize {
                throw .contentSizeMismatch(offset: start, declared: contentSize, actual: output.count - frameStart)
            }
            if isLast { break }
        }
        if let contentSize, UInt64(output.count - frameStart) != contentSize {
            throw .contentSizeMismatch(offset: start, declared: contentSize, actual: output.count - frameStart)
        }
        if hasChecksum {
            try need(4, at: position)
            let stored = UInt32(littleEndian(position, size: 4))
            let computed = UInt32(
                truncatingIfNeeded: XXHash64.hash(
                    UnsafeRawBufferPointer(
                        start: output.base.map { UnsafeRawPointer($0 + frameStart) }, count: output.count - frameStart)))
            guard stored == computed else { throw .checksumMismatch(offset: position, stored: stored, computed: computed) }
            position += 4
        }
        return position
    }

    private func blockTooLarge(_ offset: Int, _ size: Int) -> ZstdError {
        .malformed(offset: offset, detail: "a block of \(size) bytes, larger than the frame's block limit of \(blockLimit)")
    }

    /// Makes room for `size` more bytes of content, or throws `tooLarge`.
    @inline(__always)
    private func ensureRoom(_ size: Int, in output: inout ZstdOutputBuffer, at offset: Int) throws(ZstdError) {
        guard size <= output.limit - output.count else { throw .tooLarge(offset: offset, limit: output.limit) }
        output.reserve(total: output.count + size)
    }
}
