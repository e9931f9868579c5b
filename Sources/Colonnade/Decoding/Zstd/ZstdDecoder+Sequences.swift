/// The sequences section of a compressed block and their execution (RFC 8878 §3.1.1.3.2, §3.1.2).
extension ZstdDecoder {
    /// Decodes the compressed block `start ..< end` onto the end of `output`.
    /// - Precondition: `output` has room for `blockLimit` more bytes or up to its limit.
    mutating func decodeCompressedBlock(start: Int, end: Int, into output: inout ZstdOutputBuffer) throws(ZstdError) {
        let (literals, sequencesStart) = try decodeLiterals(start: start, end: end)
        var position = sequencesStart
        guard position < end else { throw .truncated(offset: end, needed: 1) }
        var sequenceCount = byte(position)
        if sequenceCount < 128 {
            position += 1
        } else if sequenceCount < 255 {
            guard end - position >= 2 else { throw .truncated(offset: end, needed: 2 - (end - position)) }
            sequenceCount = ((sequenceCount - 128) << 8) + byte(position + 1)
            position += 2
        } else {
            guard end - position >= 3 else { throw .truncated(offset: end, needed: 3 - (end - position)) }
            sequenceCount = byte(position + 1) + (byte(position + 2) << 8) + 0x7F00
            position += 3
        }
        let blockOutputStart = output.count
        // Safe: the caller reserved room; `room` bounds every write below.
        let room = min(output.capacity, blockOutputStart + blockLimit) - blockOutputStart
        if sequenceCount == 0 {
            guard position == end else {
                throw .malformed(offset: position, detail: "\(end - position) bytes after a sequences section with no sequences")
            }
            guard literals.count <= room else {
                throw overflow(total: output.count + literals.count, limit: output.limit, blockStart: start)
            }
            (output.base! + output.count).update(from: literals.start, count: literals.count)
            output.count += literals.count
            return
        }
        guard position < end else { throw .truncated(offset: end, needed: 1) }
        let modes = byte(position)
        guard modes & 3 == 0 else { throw .malformed(offset: position, detail: "sequence compression modes with reserved bits set") }
        position += 1
        literalLengths = try sequenceTable(mode: modes >> 6, field: .literalLength, previous: literalLengths, position: &position, end: end)
        offsets = try sequenceTable(mode: (modes >> 4) & 3, field: .offset, previous: offsets, position: &position, end: end)
        matchLengths = try sequenceTable(mode: (modes >> 2) & 3, field: .matchLength, previous: matchLengths, position: &position, end: end)
        guard position < end else { throw .truncated(offset: end, needed: 1) }
        var reader = try ZstdBackwardBitReader(base: base, start: position, end: end)
        let produced = try executeSequences(
            count: sequenceCount, reader: &reader, literals: literals, output: output, room: room, blockStart: start)
        guard reader.isFinished else {
            throw .malformed(offset: position, detail: "a sequences bitstream not used up exactly by its \(sequenceCount) sequences")
        }
        output.count += produced
    }

    /// The error for a block whose content would end at `total` bytes of output: past the
    /// caller's limit, or past the block limit.
    @inline(never)
    private func overflow(total: Int, limit: Int, blockStart: Int) -> ZstdError {
        if total > limit { return .tooLarge(offset: blockStart, limit: limit) }
        return .malformed(offset: blockStart, detail: "a block decoding to more than the frame's block limit of \(blockLimit) bytes")
    }

    /// The table for one field: read from the stream, RLE, predefined, or the previous one.
    private func sequenceTable(
        mode: Int, field: ZstdSequenceTable.Field, previous: ZstdSequenceTable?, position: inout Int, end: Int
    ) throws(ZstdError) -> ZstdSequenceTable {
        switch mode {
        case 0:
            return switch field {
            case .literalLength: ZstdSequenceTable.predefinedLiteralLengths
            case .matchLength: ZstdSequenceTable.predefinedMatchLengths
            case .offset: ZstdSequenceTable.predefinedOffsets
            }
        case 1:
            guard position < end else { throw .truncated(offset: end, needed: 1) }
            let symbol = byte(position)
            guard symbol <= field.maximumSymbol else {
                throw .malformed(offset: position, detail: "an RLE \(field) code of \(symbol), above \(field.maximumSymbol)")
            }
            position += 1
            return ZstdSequenceTable(rle: symbol, field: field)
        case 2:
            let (fse, after) = try ZstdFSETable.read(
                from: base, start: position, end: end, maximumAccuracyLog: field.maximumAccuracyLog, maximumSymbol: field.maximumSymbol)
            position = after
            return ZstdSequenceTable(fse, field: field)
        default:
            guard let previous else {
                throw .malformed(offset: position, detail: "repeat mode for the \(field) table with no table before it in the frame")
            }
            return previous
        }
    }

    /// Decodes `count` sequences from `reader` and executes each as it is decoded, after the
    /// output's content, then appends the literals left over.
    /// - Returns: the bytes written.
    private mutating func executeSequences(
        count: Int, reader: inout ZstdBackwardBitReader, literals: Literals, output: ZstdOutputBuffer, room: Int, blockStart: Int
    ) throws(ZstdError) -> Int {
        guard let literalTable = literalLengths, let offsetTable = offsets, let matchTable = matchLengths,
            let outputBase = output.base
        else { return 0 }
        var decoder = ZstdSequenceReader(
            bits: reader, literalLengths: literalTable, matchLengths: matchTable, offsets: offsetTable, repeatOffsets: repeatOffsets)
        let frameFirst = outputBase + frameStart
        let start = outputBase + output.count
        var out = start
        let outEnd = start + room
        let writableEnd = outputBase + output.writableEnd
        var literal = literals.start
        let literalEnd = literals.start + literals.count
        let window = windowSize
        let streamStart = reader.start
        // The fast path's limits, checked once per sequence: literals read and output written
        // wholly before them leave room for whole 16-byte vectors past their ends (32 bytes of
        // margin: a copy ends at most 15 bytes past its length).
        let literalFastEnd = min(literalEnd, literals.readable - 32)
        let outFastEnd = min(outEnd, writableEnd - 32)
        // Most sequences go through the fast loop, which stops (with the sequence it could not
        // execute still to do) near the ends of the bitstream, the literals or the output.
        var first = 0
        var pending: ZstdSequence?
        if usesFastLoop {
            let tables = combinedTables ?? .allocate(capacity: ZstdFastSequences.tableCapacity)
            combinedTables = tables
            var fast = ZstdFastSequences(
                out: out, literal: literal, outFastEnd: outFastEnd, literalFastEnd: literalFastEnd, frameFirst: frameFirst, window: window)
            pending = fast.run(
                count: count, decoder: &decoder, tables: tables, literalLengths: literalTable, matchLengths: matchTable,
                offsets: offsetTable)
            out = fast.out
            literal = fast.literal
            first = pending == nil ? fast.done : fast.done - 1
        }
        for index in first ..< count {
            let sequence: ZstdSequence
            if let decoded = pending, index == first {
                // Decoded by the fast loop (states updated, bits reloaded): executed here, checked.
                guard decoded.offset > 0 else {
                    throw .malformed(offset: streamStart, detail: "sequence \(index): a repeat offset of 0")
                }
                sequence = decoded
            } else {
                sequence = try decoder.next(isLast: index + 1 == count, index: index, streamStart: streamStart)
            }
            let literalLength = sequence.literalLength, matchLength = sequence.matchLength, offset = sequence.offset
            // Execution (RFC 8878 §3.1.2).
            if literalLength <= literalFastEnd - literal && matchLength <= outFastEnd - out &- literalLength
                && offset <= min(out + literalLength - frameFirst, window)
            {
                // Safe: the literals lie before `literalFastEnd` and the output before
                // `outFastEnd`, each with 32 bytes readable or writable past it; the match starts
                // in the frame's output (offsets are at least 1), and each copy reads only bytes
                // already written (16-byte vectors from 16 back or more, else 8-byte words once
                // the source is 8 or more bytes behind).
                copyLiteralVectors(from: literal, count: literalLength, to: out)
                literal += literalLength
                out += literalLength
                if offset >= 16 {
                    copyFarMatchVectors(to: out, offset: offset, count: matchLength)
                } else {
                    copyNearMatchWords(to: out, offset: offset, count: matchLength)
                }
                out += matchLength
                continue
            }
            guard literalLength <= literalEnd - literal else {
                throw .malformed(
                    offset: streamStart, detail: "sequence \(index): \(literalLength) literals, only \(literalEnd - literal) left")
            }
            guard matchLength <= outEnd - out - literalLength else {
                throw overflow(total: out - outputBase + literalLength + matchLength, limit: output.limit, blockStart: blockStart)
            }
            copyLiterals(from: literal, count: literalLength, to: out, readable: literals.readable, writableEnd: writableEnd)
            literal += literalLength
            out += literalLength
            guard offset <= out - frameFirst, offset <= window else {
                throw .malformed(
                    offset: streamStart,
                    detail:
                        "sequence \(index): a match \(offset) bytes back, with \(out - frameFirst) bytes of output before it and a window of \(window)"
                )
            }
            copyMatch(to: out, offset: offset, count: matchLength, writableEnd: writableEnd)
            out += matchLength
        }
        withExtendedLifetime((literalTable, matchTable, offsetTable)) {}
        reader = decoder.bits
        repeatOffsets = decoder.repeatOffsets
        let left = literalEnd - literal
        guard left <= outEnd - out else {
            throw overflow(total: out - outputBase + left, limit: output.limit, blockStart: blockStart)
        }
        out.update(from: literal, count: left)
        out += left
        return out - start
    }
}

/// The fast loop over a block's sequences (RFC 8878 §3.1.1.3.2.1, §3.1.2), as the reference
/// decoder's `ZSTD_decompressSequences_body`: each sequence decoded from bits held in locals and
/// executed with whole-vector copies, nothing checked but one comparison per limit, nothing thrown.
///
/// Runs while more than one sequence is left (so every sequence updates the states) and the
/// bitstream has 16 or more bytes before its reading position (so each of a sequence's at most
/// two reloads moves down by whole bytes without a bounds check: a reload moves at most 8). Stops
/// at the first sequence whose literals, output or match fail the fast path's checks (a repeat
/// offset of 0 among them) and hands it back, decoded, for the checked path to execute or refuse.
struct ZstdFastSequences {
    var out: UnsafeMutablePointer<UInt8>
    var literal: UnsafePointer<UInt8>
    /// Sequences decoded, the one handed back included.
    var done = 0
    let outFastEnd: UnsafeMutablePointer<UInt8>
    let literalFastEnd: UnsafePointer<UInt8>
    let frameFirst: UnsafeMutablePointer<UInt8>
    let window: Int

    init(
        out: UnsafeMutablePointer<UInt8>, literal: UnsafePointer<UInt8>, outFastEnd: UnsafeMutablePointer<UInt8>,
        literalFastEnd: UnsafePointer<UInt8>, frameFirst: UnsafeMutablePointer<UInt8>, window: Int
    ) {
        self.out = out
        self.literal = literal
        self.outFastEnd = outFastEnd
        self.literalFastEnd = literalFastEnd
        self.frameFirst = frameFirst
        self.window = window
    }

    /// Where the match length and offset tables start in the combined table (after the literal
    /// lengths' at most 512 entries and the match lengths' at most 512), and its size.
    static let matchLengthStart = 512
    static let offsetStart = 1024
    static let tableCapacity = 1280

    /// Decodes and executes sequences from `decoder` (its bits just reloaded) of the block's
    /// `count`; returns the sequence it decoded but did not execute, if any. `tables` (of
    /// `tableCapacity` entries) receives the three tables side by side, each next state already
    /// counted from the combined table's start, so that one pointer reaches all three.
    @inline(never)
    mutating func run(
        count: Int, decoder: inout ZstdSequenceReader, tables: UnsafeMutablePointer<ZstdSequenceTable.Entry>,
        literalLengths: ZstdSequenceTable, matchLengths: ZstdSequenceTable, offsets: ZstdSequenceTable
    ) -> ZstdSequence? {
        let base = decoder.bits.base
        var position = decoder.bits.position
        var consumed = decoder.bits.consumed
        var container = decoder.bits.container
        let positionLimit = decoder.bits.start &+ 16
        // Already overflowed (a stream too short for its tables): the checked path reports it.
        guard consumed <= 7, count > 1, position >= positionLimit else { return nil }
        @inline(__always) func place(_ table: ZstdSequenceTable, at start: Int) {
            // Safe: a table has at most 1 << 9 entries (1 << 8 for offsets).
            for i in 0 ..< 1 << table.accuracyLog {
                var entry = table.entries[i]
                entry.nextBase &+= UInt16(start)
                tables[start + i] = entry
            }
        }
        place(literalLengths, at: 0)
        place(matchLengths, at: Self.matchLengthStart)
        place(offsets, at: Self.offsetStart)
        let llTable = tables, mlTable = tables, ofTable = tables
        var llState = decoder.literalLengthState, mlState = decoder.matchLengthState &+ Self.matchLengthStart
        var ofState = decoder.offsetState &+ Self.offsetStart
        var (rep1, rep2, rep3) = decoder.repeatOffsets
        var out = self.out, literal = self.literal
        var left = count
        var handedBack: ZstdSequence?
        @inline(__always) func read(_ bits: UInt8) -> Int {
            let value = ((container &<< UInt64(truncatingIfNeeded: consumed)) &>> 1) &>> (63 &- UInt64(bits))
            consumed &+= Int(bits)
            return Int(truncatingIfNeeded: value)
        }
        @inline(__always) func reload() {
            // Safe: position >= start + 8 here and consumed <= 64, so the window stays in the stream.
            position &-= consumed &>> 3
            consumed &= 7
            container = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: position, as: UInt64.self))
        }
        while left > 1 && position >= positionLimit {
            // Safe: states index their tables (see ZstdSequenceReader.next).
            let ll = llTable[llState], ml = mlTable[mlState], of = ofTable[ofState]
            // Lengths' extra bits are read only when there are some (most codes have none): as the
            // reference decoder does, and the loop then keeps more of its state in registers.
            let value = Int(of.baseValue) &+ read(of.extraBits)
            var matchLength = Int(ml.baseValue)
            if ml.extraBits != 0 { matchLength &+= read(ml.extraBits) }
            if Int(of.extraBits) &+ Int(ml.extraBits) &+ Int(ll.extraBits) > 31 { reload() }
            var literalLength = Int(ll.baseValue)
            if ll.extraBits != 0 { literalLength &+= read(ll.extraBits) }
            let offset = resolveOffset(value, literalLength: literalLength, &rep1, &rep2, &rep3)
            llState = Int(ll.nextBase) &+ read(ll.bitCount)
            mlState = Int(ml.nextBase) &+ read(ml.bitCount)
            ofState = Int(of.nextBase) &+ read(of.bitCount)
            reload()
            left &-= 1
            // Execution (RFC 8878 §3.1.2): the literals and the output lie before their fast ends
            // (32 bytes of room past them for whole vectors), the match within the frame and the
            // window and at least 1 back.
            let literalsEnd = out + literalLength
            guard literalLength <= literalFastEnd - literal, matchLength <= outFastEnd - literalsEnd,
                UInt(bitPattern: offset &- 1) < UInt(bitPattern: min(literalsEnd - frameFirst, window))
            else {
                handedBack = ZstdSequence(literalLength: literalLength, matchLength: matchLength, offset: offset)
                break
            }
            copyLiteralVectors(from: literal, count: literalLength, to: out)
            literal += literalLength
            if offset >= 16 {
                copyFarMatchVectors(to: literalsEnd, offset: offset, count: matchLength)
            } else {
                copyNearMatchWords(to: literalsEnd, offset: offset, count: matchLength)
            }
            out = literalsEnd + matchLength
        }
        done = count &- left
        self.out = out
        self.literal = literal
        decoder.literalLengthState = llState
        decoder.matchLengthState = mlState &- Self.matchLengthStart
        decoder.offsetState = ofState &- Self.offsetStart
        decoder.repeatOffsets = (rep1, rep2, rep3)
        decoder.bits.resume(at: position, consumed: consumed)
        return handedBack
    }
}

/// One decoded sequence: copy `literalLength` literals, then `matchLength` bytes from `offset` back.
struct ZstdSequence {
    var literalLength: Int
    var matchLength: Int
    var offset: Int
}

/// Decodes sequences from the interleaved FSE bitstream (RFC 8878 §3.1.1.3.2.1) and resolves
/// repeat offsets (§3.1.2.5).
struct ZstdSequenceReader {
    var bits: ZstdBackwardBitReader
    let literalLengths: UnsafePointer<ZstdSequenceTable.Entry>
    let matchLengths: UnsafePointer<ZstdSequenceTable.Entry>
    let offsets: UnsafePointer<ZstdSequenceTable.Entry>
    var literalLengthState: Int
    var matchLengthState: Int
    var offsetState: Int
    var repeatOffsets: (Int, Int, Int)

    /// Reads the three initial states.
    /// - Precondition: the tables outlive the reader.
    init(
        bits: ZstdBackwardBitReader, literalLengths: ZstdSequenceTable, matchLengths: ZstdSequenceTable,
        offsets: ZstdSequenceTable, repeatOffsets: (Int, Int, Int)
    ) {
        self.bits = bits
        self.literalLengths = literalLengths.entries
        self.matchLengths = matchLengths.entries
        self.offsets = offsets.entries
        literalLengthState = Int(self.bits.read(literalLengths.accuracyLog))
        offsetState = Int(self.bits.read(offsets.accuracyLog))
        matchLengthState = Int(self.bits.read(matchLengths.accuracyLog))
        self.repeatOffsets = repeatOffsets
        self.bits.reload()
    }

    /// The next sequence; the states are not updated after the last one.
    ///
    /// One reload per sequence, at its end (as the reference decoder does): after a reload at
    /// least 57 bits are in the container (or the stream's first bit is near), and a sequence
    /// reads at most 31 + 16 + 16 extra bits and 9 + 9 + 8 state bits; when its extra bits
    /// exceed 31, a second reload comes before the literal length's.
    @inline(__always)
    mutating func next(isLast: Bool, index: Int, streamStart: Int) throws(ZstdError) -> ZstdSequence {
        // Safe: states come from `accuracyLog`-bit reads or `nextBase + bits`, both below the
        // table's size.
        let llEntry = literalLengths[literalLengthState], mlEntry = matchLengths[matchLengthState]
        let ofEntry = offsets[offsetState]
        let ofBits = Int(ofEntry.extraBits), mlBits = Int(mlEntry.extraBits), llBits = Int(llEntry.extraBits)
        // Wrapping arithmetic: the values are at most 2^32 + 2^31 (a base below 2^32 plus at most
        // 31 bits), far from overflow.
        let value = Int(ofEntry.baseValue) &+ Int(bits.read(ofBits))
        let matchLength = Int(mlEntry.baseValue) &+ Int(bits.read(mlBits))
        if ofBits &+ mlBits &+ llBits > 31 { bits.reload() }
        let literalLength = Int(llEntry.baseValue) &+ Int(bits.read(llBits))
        var (rep1, rep2, rep3) = repeatOffsets
        let offset = resolveOffset(value, literalLength: literalLength, &rep1, &rep2, &rep3)
        guard offset > 0 else { throw .malformed(offset: streamStart, detail: "sequence \(index): a repeat offset of 0") }
        repeatOffsets = (rep1, rep2, rep3)
        if !isLast {
            literalLengthState = Int(llEntry.nextBase) &+ Int(bits.read(Int(llEntry.bitCount)))
            matchLengthState = Int(mlEntry.nextBase) &+ Int(bits.read(Int(mlEntry.bitCount)))
            offsetState = Int(ofEntry.nextBase) &+ Int(bits.read(Int(ofEntry.bitCount)))
            bits.reload()
        }
        return ZstdSequence(literalLength: literalLength, matchLength: matchLength, offset: offset)
    }
}

/// A sequence's offset from its offset value (RFC 8878 §3.1.2.5), the three repeat offsets
/// `rep1` (newest) to `rep3` updated: values 1-3 choose a repeat offset (one further along after
/// no literals; the fourth choice is the first less 1), larger values are a new offset (value -
/// 3). The one place both the fast loop and the checked path resolve offsets, and where the
/// compressor (`ZstdCompressor`) follows the repeat offsets its codes leave the decoder with.
/// - Returns: the offset, 0 only for the fourth choice when `rep1` is 1 (which the checked path
///   refuses and the fast loop hands back to it).
/// - Precondition: `value >= 1` (an offset code's baseline is at least 1).
@inline(__always)
func resolveOffset(_ value: Int, literalLength: Int, _ rep1: inout Int, _ rep2: inout Int, _ rep3: inout Int) -> Int {
    var offset = value &- 3
    if value > 3 {
        rep3 = rep2
        rep2 = rep1
        rep1 = offset
    } else {
        let choice = literalLength == 0 ? value &+ 1 : value
        if choice == 1 {
            offset = rep1
        } else {
            if choice == 2 {
                offset = rep2
            } else if choice == 3 {
                offset = rep3
                rep3 = rep2
            } else {
                offset = rep1 &- 1
                rep3 = rep2
            }
            rep2 = rep1
            rep1 = offset
        }
    }
    return offset
}

/// Copies `count` literal bytes as whole 16-byte vectors: one, then more only for a longer run.
/// - Precondition: `count` rounded up to 16 bytes may be read at `source` and written at
///   `destination`, and the two do not overlap.
@inline(__always)
private func copyLiteralVectors(from source: UnsafePointer<UInt8>, count: Int, to destination: UnsafeMutablePointer<UInt8>) {
    var s = UnsafeRawPointer(source), d = UnsafeMutableRawPointer(destination)
    d.storeBytes(of: s.loadUnaligned(as: SIMD16<UInt8>.self), as: SIMD16<UInt8>.self)
    guard count > 16 else { return }
    let end = d + count
    s += 16
    d += 16
    repeat {
        d.storeBytes(of: s.loadUnaligned(as: SIMD16<UInt8>.self), as: SIMD16<UInt8>.self)
        s += 16
        d += 16
    } while d < end
}

/// Copies a match of `count` bytes from `offset` (16 or more) bytes back as whole 16-byte
/// vectors: one, then more only for a longer match.
/// - Precondition: `offset >= 16`, the source lies in the output, and `count` rounded up to 16
///   bytes is writable at `destination`.
@inline(__always)
private func copyFarMatchVectors(to destination: UnsafeMutablePointer<UInt8>, offset: Int, count: Int) {
    var d = UnsafeMutableRawPointer(destination)
    d.storeBytes(of: UnsafeRawPointer(d - offset).loadUnaligned(as: SIMD16<UInt8>.self), as: SIMD16<UInt8>.self)
    guard count > 16 else { return }
    let end = d + count
    d += 16
    repeat {
        d.storeBytes(of: UnsafeRawPointer(d - offset).loadUnaligned(as: SIMD16<UInt8>.self), as: SIMD16<UInt8>.self)
        d += 16
    } while d < end
}

/// Copies a match of `count` bytes from `offset` (1...15) bytes back, overlapping, in 8-byte
/// words (as the reference decoder's `ZSTD_overlapCopy8` and short-offset wild copy do): the first
/// eight bytes so that the source then lies 8 or more bytes behind, at a multiple of `offset`
/// (a period of the repeated pattern), then whole words. Writes at most 8 bytes, or `count`
/// rounded up to 8, past `destination`.
/// - Precondition: `1 <= offset <= 15`, the source lies in the output, and `max(8, count)`
///   rounded up to 8 bytes is writable at `destination`.
@inline(__always)
private func copyNearMatchWords(to destination: UnsafeMutablePointer<UInt8>, offset: Int, count: Int) {
    var d = UnsafeMutableRawPointer(destination)
    var s = UnsafeRawPointer(destination - offset)
    if offset < 8 {
        // Four bytes one by one (each reads a byte already written), then four from a source
        // moved on by a multiple of the period; the source then moves back so that it lies a
        // multiple of `offset`, and at least 8, behind. Tables of the reference decoder:
        // {0, 1, 2, 1, 4, 4, 4, 4} added and {8, 8, 8, 7, 8, 9, 10, 11} subtracted, as nibbles.
        let added = (0x4444_1210 &>> (4 &* offset)) & 15
        let subtracted = (0xBA98_7888 &>> (4 &* offset)) & 15
        d.storeBytes(of: s.load(as: UInt8.self), as: UInt8.self)
        d.storeBytes(of: s.load(fromByteOffset: 1, as: UInt8.self), toByteOffset: 1, as: UInt8.self)
        d.storeBytes(of: s.load(fromByteOffset: 2, as: UInt8.self), toByteOffset: 2, as: UInt8.self)
        d.storeBytes(of: s.load(fromByteOffset: 3, as: UInt8.self), toByteOffset: 3, as: UInt8.self)
        d.storeBytes(of: s.loadUnaligned(fromByteOffset: added, as: UInt32.self), toByteOffset: 4, as: UInt32.self)
        // The source now lies 8, 8, 9, 8, 10, 12 or 14 bytes behind for offsets 1 to 7 (never
        // before `destination - offset`).
        s += added &- subtracted &+ 8
    } else {
        d.storeBytes(of: s.loadUnaligned(as: UInt64.self), as: UInt64.self)
        s += 8
    }
    d += 8
    let end = UnsafeMutableRawPointer(destination) + count
    while d < end {
        d.storeBytes(of: s.loadUnaligned(as: UInt64.self), as: UInt64.self)
        s += 8
        d += 8
    }
}

/// Copies `count` literal bytes in whole 16-byte vectors when both sides have room for the last
/// one's overshoot (literals come from the scratch buffer or the input, never the output, so
/// the two do not overlap); by `memmove` otherwise.
@inline(__always)
private func copyLiterals(
    from source: UnsafePointer<UInt8>, count: Int, to destination: UnsafeMutablePointer<UInt8>,
    readable: UnsafePointer<UInt8>, writableEnd: UnsafeMutablePointer<UInt8>
) {
    let rounded = (count &+ 15) & ~15
    if readable - source >= rounded && writableEnd - destination >= rounded {
        // Safe: `rounded` bytes may be read from `source` and written at `destination`.
        var s = UnsafeRawPointer(source), d = UnsafeMutableRawPointer(destination)
        let end = d + count
        while d < end {
            d.storeBytes(of: s.loadUnaligned(as: SIMD16<UInt8>.self), as: SIMD16<UInt8>.self)
            s += 16
            d += 16
        }
    } else {
        destination.update(from: source, count: count)
    }
}

/// Copies `count` bytes from `offset` bytes back, overlapping when `offset < count`: 16-byte
/// vectors from 16 back or more (each read wholly behind where it is written), 8-byte words from
/// 8 back, and below 8 the pattern first repeated byte by byte to a period of at least 8. Up to
/// 15 bytes past the end may be written where the output has that room; byte by byte where not.
/// - Precondition: `1 <= offset`, the source lies in the output, `destination + count` is writable.
@inline(__always)
private func copyMatch(to destination: UnsafeMutablePointer<UInt8>, offset: Int, count: Int, writableEnd: UnsafeMutablePointer<UInt8>) {
    var out = destination
    let end = destination + count
    var distance = offset
    if distance >= 16 && writableEnd - destination >= (count &+ 15) & ~15 {
        // Safe: every vector is read at least 16 bytes behind where it is written, and the
        // rounded-up length is writable.
        while out < end {
            UnsafeMutableRawPointer(out).storeBytes(
                of: UnsafeRawPointer(out - distance).loadUnaligned(as: SIMD16<UInt8>.self), as: SIMD16<UInt8>.self)
            out += 16
        }
        return
    }
    if distance < 8 {
        // Copy bytes until the pattern, repeated, is at least 8 long: a period of `offset` is also
        // a period of any multiple of it, once that many bytes exist.
        let multiple = distance * ((8 + distance - 1) / distance)
        let lead = min(count, multiple - distance)
        for _ in 0 ..< lead {
            out.pointee = (out - distance).pointee
            out += 1
        }
        distance = multiple
    }
    if writableEnd - end >= 8 {
        // Safe: words are read at least 8 bytes behind where they are written, and up to 7 bytes
        // past `end` may be written (slack).
        while out < end {
            let raw = UnsafeMutableRawPointer(out)
            raw.storeBytes(of: UnsafeRawPointer(out - distance).loadUnaligned(as: UInt64.self), as: UInt64.self)
            out += 8
        }
    } else {
        while out < end {
            out.pointee = (out - distance).pointee
            out += 1
        }
    }
}
