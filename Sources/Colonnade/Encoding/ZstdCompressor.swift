import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Zstandard compression (RFC 8878), written from the format's specification; `Zstd.decompress`
/// (and the reference `zstd -d`) read what it writes. ARCHITECTURE.md, Encoding.
///
/// One frame: the content size, a single segment when the input fits the level's window, blocks
/// of at most 128 KiB, and the XXH64 content checksum. Each block is LZ77-matched: at level 1
/// zstd's "fast" search (one 16 K-entry table of 6-byte prefixes, positions searched in pairs,
/// no chains: hashing 6 bytes, not 4, keeps the repeated high bytes of numbers from making floods
/// of short matches); at levels 2 to 4 zstd's "double fast" search (a table of 8-byte and one of
/// 6-byte prefixes, no chains); from level 5 a chained hash table searched deeper as the level
/// rises, with lazy matching; the last offset is tried first. Sequences and literals go into
/// buffers allocated once per frame, and the sequences' bitstream is written from a 64-bit
/// register through a pointer (stored once a sequence), as the Huffman streams are (once every
/// four codes). Literals are
/// Huffman-coded (one or four streams, weights written directly or FSE-compressed) and sequences
/// FSE-coded, each of the three fields with the predefined table, one symbol (RLE) or a table
/// fitted to the block, whichever is smallest. A block that does not shrink is stored raw, one of
/// a single repeated byte as RLE.
///
/// ```swift
/// let frame = bytes.withUnsafeBytes { ZstdCompressor.compress($0, level: 3) }
/// ```
public enum ZstdCompressor {
    /// The levels `compress` takes; higher searches longer for matches.
    public static let levels = 1 ... 19
    /// The level when none is given (as the `zstd` tool's).
    public static let defaultLevel = 3
    /// The level of files Colonnade writes when `zstd` is asked without one (`export --compression
    /// zstd`, Delta tables): 1. Its files of quotes are as small as Polars' default zstd output
    /// (0.998× at 5 M rows, 1.000× at 20 M) and it takes about half level 3's time; `zstd:3` and
    /// higher remain a choice (see docs/MEASUREMENTS.md).
    package static let fileDefaultLevel = 1
    /// The largest block's content.
    static let blockSize = 1 << 17

    /// Block encoders (with their match tables) of finished frames, kept for the next frames on
    /// any thread: a Parquet export makes a frame a page, and a frame's buffers allocated afresh
    /// were pages faulted in and zeroed again for every page.
    static let spareEncoders = Mutex<[BlockEncoder]>([])
    /// At most this many are kept (about 1.5 MB each, more with tables).
    static let sparesKept = 16

    /// The frame of `input` at `level` (clamped to `levels`).
    /// - Complexity: O(input × search depth of the level).
    public static func compress(_ input: UnsafeRawBufferPointer, level: Int = defaultLevel) -> [UInt8] {
        let blockEncoder = spareEncoders.withLock { $0.popLast() } ?? BlockEncoder()
        var state = MatchState(
            level: min(max(level, levels.lowerBound), levels.upperBound), size: input.count,
            hashStorage: &blockEncoder.hashStorage, chainStorage: &blockEncoder.chainStorage)
        defer {
            blockEncoder.keep(&state)
            spareEncoders.withLock { spares in
                if spares.count < sparesKept { spares.append(blockEncoder) }
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(input.count / 2 + 64)
        // Frame header (RFC 8878 §3.1.1.1).
        appendLE(&out, 0xFD2F_B528, 4)
        let size = input.count
        let single = size <= 1 << state.windowLog
        let sizeFlag: UInt8 = size < 256 ? (single ? 0 : 1) : size < 65536 + 256 ? 1 : size <= Int(UInt32.max) ? 2 : 3
        out.append(sizeFlag << 6 | (single ? 1 << 5 : 0) | 1 << 2)
        if !single { out.append(UInt8(state.windowLog - 10) << 3) }
        switch sizeFlag {
        case 0: out.append(UInt8(size))
        case 1: appendLE(&out, UInt64(size - 256), 2)
        case 2: appendLE(&out, UInt64(size), 4)
        default: appendLE(&out, UInt64(size), 8)
        }
        if let base = input.baseAddress?.assumingMemoryBound(to: UInt8.self), size > 0 {
            var start = 0
            while start < size {
                let end = min(size, start + blockSize)
                blockEncoder.encode(base, start: start, end: end, inputEnd: base + size, last: end == size, state: &state, into: &out)
                start = end
            }
        } else {
            appendLE(&out, 1, 3)  // one empty, last raw block
        }
        appendLE(&out, UInt64(UInt32(truncatingIfNeeded: XXHash64.hash(input))), 4)
        return out
    }

    @inline(__always)
    static func appendLE(_ out: inout [UInt8], _ value: UInt64, _ bytes: Int) {
        for i in 0 ..< bytes { out.append(UInt8(truncatingIfNeeded: value >> UInt64(8 * i))) }
    }

    // MARK: Matching

    /// One LZ77 sequence: `literals` bytes, then `length` bytes copied from `offset` back; or,
    /// from the fast strategy (`SequenceStore.offsetValues`), `offset` is already the offset
    /// value the decoder reads (1 a repeat offset, else the offset plus 3).
    struct Sequence {
        var literals: UInt32
        var length: UInt32
        var offset: UInt32
    }

    /// The match finder's tables, kept across the blocks of a frame.
    struct MatchState {
        let windowLog: Int
        let hashLog: Int
        let chainLog: Int
        let depth: Int
        let lazy: Bool
        /// Level 1: zstd's "fast" strategy (`findSequencesFast`): `hash` holds one position per
        /// hash of `minimumMatch` bytes, no chain.
        let fast: Bool
        /// The bytes the fast strategy hashes.
        let minimumMatch: Int
        /// Levels 2 to 4: zstd's "double fast" strategy (`findSequencesDoubleFast`): `hash` holds
        /// 8-byte prefixes, `chain` 6-byte ones, one position each, no chains followed.
        let doubleFast: Bool
        var hash: [Int32]
        var chain: [Int32]
        /// The decoder's three repeat offsets, after the blocks written so far.
        var repeats: (UInt32, UInt32, UInt32) = (1, 4, 8)
        /// The last match's offset (tried first at the next position).
        var lastOffset = 1
        /// The offset before it (double fast tries it right after a match).
        var secondOffset = 4

        /// The tables of `level` for `size` bytes, emptied, in the buffers taken from `hashStorage`
        /// and `chainStorage` (left empty).
        init(level: Int, size: Int, hashStorage: inout [Int32], chainStorage: inout [Int32]) {
            windowLog = level < 6 ? 21 : level < 12 ? 22 : 23
            let sizeLog = max(10, Int.bitWidth - max(1, size).leadingZeroBitCount)
            fast = level == 1
            minimumMatch = 6
            doubleFast = level >= 2 && level <= 4
            hashLog = min(level < 2 ? 14 : level < 9 ? 17 : 18, sizeLog + 1)
            chainLog = level < 2 ? 0 : min(level < 9 ? 16 : windowLog, sizeLog)
            depth = level < 3 ? 0 : level < 5 ? 4 : level < 8 ? 16 : level < 13 ? 48 : 128
            lazy = level >= 5
            // The fast strategy's empty entry lies more than a window before any position.
            hash = []
            chain = []
            swap(&hash, &hashStorage)
            swap(&chain, &chainStorage)
            Self.fill(&hash, with: fast ? Int32.min : -1, count: 1 << hashLog)
            Self.fill(&chain, with: -1, count: chainLog > 0 ? 1 << chainLog : 0)
        }

        /// Makes `table` `count` times `value`, in its buffer when that is large enough.
        static func fill(_ table: inout [Int32], with value: Int32, count: Int) {
            if table.count == count {
                table.withUnsafeMutableBufferPointer { $0.update(repeating: value) }
            } else {
                table.removeAll(keepingCapacity: true)
                table.append(contentsOf: repeatElement(value, count: count))
            }
        }
    }

    @inline(__always)
    static func load32(_ p: UnsafePointer<UInt8>) -> UInt32 { UnsafeRawPointer(p).loadUnaligned(as: UInt32.self) }
    @inline(__always)
    static func load64(_ p: UnsafePointer<UInt8>) -> UInt64 { UnsafeRawPointer(p).loadUnaligned(as: UInt64.self) }

    /// A match's worth in quarter bytes: its length, less its offset's bits (zstd's lazy rule).
    @inline(__always)
    static func gain(_ length: Int, _ offset: Int) -> Int {
        length * 4 - (Int.bitWidth - 1 - max(1, offset).leadingZeroBitCount)
    }

    /// The number of equal bytes at `a` and `b`, at most `limit`.
    @inline(__always)
    static func matchLength(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, limit: Int) -> Int {
        var n = 0
        while n + 8 <= limit {
            let x = load64(a + n) ^ load64(b + n)
            if x != 0 { return n + x.trailingZeroBitCount >> 3 }
            n += 8
        }
        while n < limit && a[n] == b[n] { n += 1 }
        return n
    }

    /// Finds the sequences of `start ..< end` (earlier bytes of `base` are history), appending
    /// the literals to `literals`; returns the trailing literal count.
    static func findSequences(
        _ base: UnsafePointer<UInt8>, start: Int, end: Int, state: inout MatchState,
        store: inout SequenceStore
    ) {
        if state.fast {
            return findSequencesFast(base, start: start, end: end, state: &state, store: &store)
        }
        if state.doubleFast {
            return findSequencesDoubleFast(base, start: start, end: end, state: &state, store: &store)
        }
        let minimum = 4
        var anchor = start
        var ip = start
        // The last position a 4-byte hash may be read at without reading past the block.
        let limit = end - 8
        let window = 1 << state.windowLog
        let hashShift = 32 - state.hashLog
        let chainMask = (1 << state.chainLog) - 1
        let depth = state.depth
        let chained = state.chainLog > 0
        var lastOffset = state.lastOffset
        state.hash.withUnsafeMutableBufferPointer { hashTable in
            state.chain.withUnsafeMutableBufferPointer { chainTable in
                @inline(__always) func hashOf(_ p: Int) -> Int { Int((load32(base + p) &* 2_654_435_761) >> UInt32(hashShift)) }
                // Every position below this is in the tables: inserting one twice would link
                // it to itself and cut its chain short.
                var indexed = start
                @inline(__always) func insert(_ p: Int) {
                    guard p >= indexed else { return }
                    indexed = p + 1
                    let h = hashOf(p)
                    if chained { chainTable[p & chainMask] = hashTable[h] }
                    hashTable[h] = Int32(p)
                }
                /// The best match at `p` (length, offset), inserting `p`.
                @inline(__always) func search(_ p: Int) -> (Int, Int) {
                    let h = hashOf(p)
                    var candidate = Int(hashTable[h])
                    if p >= indexed {
                        if chained { chainTable[p & chainMask] = Int32(candidate) }
                        hashTable[h] = Int32(p)
                        indexed = p + 1
                    } else if candidate == p {
                        // Searched again (after a lazy look one ahead): start from its link.
                        candidate = chained ? Int(chainTable[p & chainMask]) : -1
                    }
                    var bestLength = 0, bestOffset = 0
                    let maxLength = end - p
                    // Any candidate in the window may match (the hash table's head reaches as
                    // far back as the lowest level's does); only one newer than the chain
                    // table's span has a link that is still its own to follow.
                    let lowest = max(0, p - window)
                    let linked = p - chainMask
                    var tries = max(depth, 1)
                    while candidate >= lowest && candidate < p && tries > 0 {
                        if base[candidate + bestLength] == base[p + bestLength] || bestLength == 0 {
                            let n = matchLength(base + p, base + candidate, limit: maxLength)
                            // Longer, unless the extra length costs more in offset bits than it saves.
                            if n > bestLength && (n >= 5 || p - candidate <= 1 << 16)
                                && (bestLength == 0 || gain(n, p - candidate) > gain(bestLength, bestOffset))
                            {
                                bestLength = n
                                bestOffset = p - candidate
                                if n == maxLength { break }
                            }
                        }
                        tries -= 1
                        guard chained && candidate >= linked else { break }
                        let next = Int(chainTable[candidate & chainMask])
                        if next >= candidate { break }
                        candidate = next
                    }
                    return (bestLength, bestOffset)
                }
                @inline(__always) func emit(_ p: Int, _ length: Int, _ offset: Int) {
                    store.add(base + anchor, literals: p - anchor, length: length, offset: offset)
                    lastOffset = offset
                    let matchEnd = p + length
                    // Index a few positions inside the match (all of them when chaining deeply).
                    if depth >= 16 {
                        var q = p + 1
                        while q < matchEnd && q <= limit {
                            insert(q)
                            q += 1
                        }
                    } else if matchEnd - 2 <= limit && matchEnd - 2 > p {
                        insert(matchEnd - 2)
                    }
                    ip = matchEnd
                    anchor = matchEnd
                }
                while ip <= limit {
                    // The last offset first: long runs of repeated records match at it.
                    if lastOffset <= ip && lastOffset <= window && load32(base + ip) == load32(base + ip - lastOffset) {
                        let n = matchLength(base + ip, base + ip - lastOffset, limit: end - ip)
                        if n >= minimum {
                            insert(ip)
                            emit(ip, n, lastOffset)
                            continue
                        }
                    }
                    var (length, offset) = search(ip)
                    if length < minimum {
                        // Speed up over data that does not match.
                        ip += 1 + ((ip - anchor) >> 8)
                        continue
                    }
                    if state.lazy && ip + 1 <= limit {
                        let (l2, o2) = search(ip + 1)
                        // One literal more costs about a byte: the later match must gain more.
                        if l2 >= minimum && gain(l2, o2) > gain(length, offset) + 4 {
                            ip += 1
                            length = l2
                            offset = o2
                        }
                    }
                    emit(ip, length, offset)
                }
            }
        }
        state.lastOffset = lastOffset
        store.addLiterals(base + anchor, end - anchor)
    }

    /// `findSequences` for levels 2 to 4, as the reference compressor's "double fast" strategy
    /// (`ZSTD_compressBlock_doubleFast`): at each position, the last offset one byte ahead, then the
    /// last position with the same 8 bytes (`state.hash`), then the last with the same 6 bytes
    /// (`state.chain`, compared on 4), preferring an 8-byte match one position on; a match found is
    /// extended backward over the literals before it. Positions without a match are skipped faster
    /// the longer the run without one (one more byte per step every 128), and after a match only
    /// four positions are indexed, then the offset before the last is tried again at once: one
    /// read of each table per position, no chains followed.
    static func findSequencesDoubleFast(
        _ base: UnsafePointer<UInt8>, start: Int, end: Int, state: inout MatchState,
        store: inout SequenceStore
    ) {
        var anchor = start
        var ip = start
        // The last position an 8-byte hash may be read at without reading past the block.
        let limit = end - 8
        let window = 1 << state.windowLog
        let longShift = UInt64(64 - state.hashLog), shortShift = UInt64(64 - state.chainLog)
        var rep1 = state.lastOffset, rep2 = state.secondOffset
        state.hash.withUnsafeMutableBufferPointer { longTable in
            state.chain.withUnsafeMutableBufferPointer { shortTable in
                // Safe: the tables hold 1 << hashLog and 1 << chainLog entries, and the hashes
                // are the top hashLog and chainLog bits of a 64-bit product.
                guard let long = longTable.baseAddress, let short = shortTable.baseAddress else { return }
                @inline(__always) func hashLong(_ p: Int) -> Int {
                    Int(truncatingIfNeeded: (load64(base + p) &* 0xCF1B_BCDC_B7A5_6463) &>> longShift)
                }
                @inline(__always) func hashShort(_ p: Int) -> Int {
                    Int(truncatingIfNeeded: ((load64(base + p) &<< 16) &* 227_718_039_650_203) &>> shortShift)
                }
                /// Whether a table's position may be matched from `p`: set, before it, in the window.
                @inline(__always) func usable(_ candidate: Int, _ p: Int) -> Bool {
                    candidate >= 0 && candidate < p && p - candidate <= window
                }
                @inline(__always) func emit(_ p: Int, _ length: Int, _ offset: Int) {
                    store.add(base + anchor, literals: p - anchor, length: length, offset: offset)
                }
                /// A match of `length` at `p` from `candidate`, moved back over equal bytes before
                /// both (not before the literals' start, nor the input's): its start and length.
                @inline(__always) func extendBack(_ p: Int, _ candidate: Int, _ length: Int) -> (Int, Int) {
                    var p = p, m = candidate, n = length
                    while p > anchor && m > 0 && base[p - 1] == base[m - 1] {
                        p -= 1
                        m -= 1
                        n += 1
                    }
                    return (p, n)
                }
                while true {
                    var step = 1
                    var nextStep = ip + 128
                    var ip1 = ip + 1
                    if ip1 > limit { break }
                    var hl0 = hashLong(ip)
                    var idxl0 = Int(long[hl0])
                    var hl1 = 0
                    var searchStart = ip
                    var found = false, repeated = false
                    var length = 0, offset = 0
                    while ip1 <= limit {
                        let hs0 = hashShort(ip)
                        let idxs0 = Int(short[hs0])
                        searchStart = ip
                        long[hl0] = Int32(truncatingIfNeeded: ip)
                        short[hs0] = Int32(truncatingIfNeeded: ip)
                        // The last offset one byte on (the byte here becomes a literal).
                        if rep1 <= ip + 1 && load32(base + ip + 1 - rep1) == load32(base + ip + 1) {
                            length = matchLength(base + ip + 5, base + ip + 5 - rep1, limit: end - ip - 5) + 4
                            ip += 1
                            offset = rep1
                            found = true
                            repeated = true
                            break
                        }
                        hl1 = hashLong(ip1)
                        if usable(idxl0, ip) && load64(base + idxl0) == load64(base + ip) {
                            let n = matchLength(base + ip + 8, base + idxl0 + 8, limit: end - ip - 8) + 8
                            offset = ip - idxl0
                            (ip, length) = extendBack(ip, idxl0, n)
                            found = true
                            break
                        }
                        let idxl1 = Int(long[hl1])
                        if usable(idxs0, ip) && load32(base + idxs0) == load32(base + ip) {
                            // Four bytes match here; eight at the next position are worth the
                            // literal more.
                            if usable(idxl1, ip1) && load64(base + idxl1) == load64(base + ip1) {
                                let n = matchLength(base + ip1 + 8, base + idxl1 + 8, limit: end - ip1 - 8) + 8
                                offset = ip1 - idxl1
                                (ip, length) = extendBack(ip1, idxl1, n)
                            } else {
                                let n = matchLength(base + ip + 4, base + idxs0 + 4, limit: end - ip - 4) + 4
                                offset = ip - idxs0
                                (ip, length) = extendBack(ip, idxs0, n)
                            }
                            found = true
                            break
                        }
                        if ip1 >= nextStep {
                            step += 1
                            nextStep += 128
                        }
                        ip = ip1
                        ip1 += step
                        hl0 = hl1
                        idxl0 = idxl1
                    }
                    if !found { break }
                    if !repeated {
                        (rep1, rep2) = (offset, rep1)
                        // The next position, searched but not indexed; it lies inside the match
                        // while the step is below 4 (a match is at least 4 long).
                        if step < 4 { long[hl1] = Int32(truncatingIfNeeded: ip1) }
                    }
                    emit(ip, length, offset)
                    ip += length
                    anchor = ip
                    guard ip <= limit else { continue }
                    // Two positions inside the match and two at its end.
                    let inside = searchStart + 2
                    long[hashLong(inside)] = Int32(truncatingIfNeeded: inside)
                    long[hashLong(ip - 2)] = Int32(truncatingIfNeeded: ip - 2)
                    short[hashShort(inside)] = Int32(truncatingIfNeeded: inside)
                    short[hashShort(ip - 1)] = Int32(truncatingIfNeeded: ip - 1)
                    // The offset before the last, at once (no literals between).
                    while ip <= limit && rep2 <= ip && load32(base + ip) == load32(base + ip - rep2) {
                        let n = matchLength(base + ip + 4, base + ip + 4 - rep2, limit: end - ip - 4) + 4
                        (rep1, rep2) = (rep2, rep1)
                        short[hashShort(ip)] = Int32(truncatingIfNeeded: ip)
                        long[hashLong(ip)] = Int32(truncatingIfNeeded: ip)
                        emit(ip, n, rep1)
                        ip += n
                        anchor = ip
                    }
                }
            }
        }
        state.lastOffset = rep1
        state.secondOffset = rep2
        store.addLiterals(base + anchor, end - anchor)
    }

    /// `findSequences` for level 1, as the reference compressor's "fast" strategy
    /// (`ZSTD_compressBlock_fast`): one table of positions by a hash of their first
    /// `state.minimumMatch` bytes (so that the repeated high bytes of numbers do not make floods
    /// of 4-byte matches), no chains. Positions are searched in pairs, the next pair `step` on:
    /// every position while `step` is 2, which grows by one every 128 bytes without a match. At
    /// each pair the last offset is tried two bytes on first. A match found is extended backward
    /// over the literals before it (one literal is left before a match at the last offset); after
    /// a match two positions are indexed and the offset before the last is tried at once. Its
    /// last two offsets are the decoder's first two repeat offsets (restored with them when a
    /// block is stored raw), so it stores offset values (`SequenceStore.offsetValues`): 1 for
    /// either repeat, else the offset plus 3, as the reference's fast strategy does.
    static func findSequencesFast(
        _ base: UnsafePointer<UInt8>, start: Int, end: Int, state: inout MatchState,
        store: inout SequenceStore
    ) {
        var anchor = start
        var ip0 = start
        // The last position a hash (an 8-byte load) may be read at without reading past the block.
        let limit = end - 8
        let window = 1 << state.windowLog
        let shift = UInt64(64 - state.hashLog)
        let keep = UInt64(64 - 8 * state.minimumMatch)
        let prime: UInt64 =
            state.minimumMatch == 5 ? 889_523_592_379 : state.minimumMatch == 6 ? 227_718_039_650_203 : 58_295_818_150_454_627
        var rep1 = state.lastOffset, rep2 = state.secondOffset
        // rep1 and rep2 are the decoder's first two repeat offsets (its third is never used).
        store.offsetValues = true
        state.hash.withUnsafeMutableBufferPointer { hashTable in
            // Safe: the table holds 1 << hashLog entries and a hash is the top hashLog bits of a
            // 64-bit product.
            guard let table = hashTable.baseAddress else { return }
            @inline(__always) func hashOf(_ p: Int) -> Int {
                Int(truncatingIfNeeded: ((load64(base + p) &<< keep) &* prime) &>> shift)
            }
            /// Whether `candidate` (a table entry) lies 1 to `window` bytes before `p`: never
            /// the empty entry, which lies further back than any window.
            @inline(__always) func usable(_ candidate: Int, _ p: Int) -> Bool {
                UInt(bitPattern: p &- candidate &- 1) < UInt(window)
            }
            @inline(__always) func put(_ h: Int, _ p: Int) { table[h] = Int32(truncatingIfNeeded: p) }
            while true {
                var step = 2
                var nextStep = ip0 + 128
                var ip1 = ip0 + 1
                var ip2 = ip0 + step
                var ip3 = ip2 + 1
                guard ip3 <= limit else { break }
                var hash0 = hashOf(ip0)
                var hash1 = hashOf(ip1)
                var candidate = Int(table[hash0])
                // The position of the last table write before the match: indexed again 2 on.
                var current = ip0
                var matchStart = 0, matchFrom = 0, length = 0
                var found = false, repeated = false
                repeat {
                    current = ip0
                    put(hash0, ip0)
                    // The last offset at ip2, one byte before it too when that byte matches.
                    if rep1 <= ip2 && rep1 <= window && load32(base + ip2) == load32(base + (ip2 &- rep1)) {
                        matchStart = ip2
                        matchFrom = ip2 - rep1
                        length = 4
                        if matchFrom > 0 && base[matchStart - 1] == base[matchFrom - 1] {
                            matchStart -= 1
                            matchFrom -= 1
                            length += 1
                        }
                        put(hash1, ip1)
                        found = true
                        repeated = true
                        break
                    }
                    if usable(candidate, ip0) && load32(base + candidate) == load32(base + ip0) {
                        put(hash1, ip1)
                        matchStart = ip0
                        matchFrom = candidate
                        length = 4
                        (rep1, rep2) = (ip0 - candidate, rep1)
                        found = true
                        break
                    }
                    candidate = Int(table[hash1])
                    hash0 = hash1
                    hash1 = hashOf(ip2)
                    ip0 = ip1
                    ip1 = ip2
                    ip2 = ip3
                    current = ip0
                    put(hash0, ip0)
                    if usable(candidate, ip0) && load32(base + candidate) == load32(base + ip0) {
                        // ip1 is searched again after the match unless it lies inside it (a
                        // match is at least 4 long).
                        if step <= 4 { put(hash1, ip1) }
                        matchStart = ip0
                        matchFrom = candidate
                        length = 4
                        (rep1, rep2) = (ip0 - candidate, rep1)
                        found = true
                        break
                    }
                    candidate = Int(table[hash1])
                    hash0 = hash1
                    hash1 = hashOf(ip2)
                    ip0 = ip1
                    ip1 = ip2
                    ip2 = ip0 &+ step
                    ip3 = ip1 &+ step
                    if ip2 >= nextStep {
                        step &+= 1
                        nextStep &+= 128
                    }
                } while ip3 <= limit
                guard found else { break }
                // Backward over the literals, leaving one before a match at the last offset: offset
                // value 1 names the last offset only after literals (after none, the one before).
                let lowest = repeated ? anchor + 1 : anchor
                while matchStart > lowest && matchFrom > 0 && base[matchStart - 1] == base[matchFrom - 1] {
                    matchStart -= 1
                    matchFrom -= 1
                    length += 1
                }
                length += matchLength(base + matchStart + length, base + matchFrom + length, limit: end - matchStart - length)
                // The offset value: 1 for the last offset (tried two bytes on, so after at least
                // one literal), else the new offset plus 3.
                let value = repeated ? 1 : matchStart - matchFrom + 3
                store.add(base + anchor, literals: matchStart - anchor, length: length, offset: value)
                ip0 = matchStart + length
                anchor = ip0
                guard ip0 <= limit else { continue }
                put(hashOf(current + 2), current + 2)
                put(hashOf(ip0 - 2), ip0 - 2)
                // The offset before the last, at once (no literals between).
                while ip0 <= limit && rep2 <= ip0 && rep2 <= window && load32(base + ip0) == load32(base + ip0 - rep2) {
                    let n = matchLength(base + ip0 + 4, base + ip0 + 4 - rep2, limit: end - ip0 - 4) + 4
                    (rep1, rep2) = (rep2, rep1)
                    put(hashOf(ip0), ip0)
                    // Offset value 1 after no literals: the decoder's second repeat offset.
                    store.add(base + ip0, literals: 0, length: n, offset: 1)
                    ip0 += n
                    anchor = ip0
                }
            }
        }
        state.lastOffset = rep1
        state.secondOffset = rep2
        store.addLiterals(base + anchor, end - anchor)
    }

    // MARK: Blocks

    /// One block's sequences and literals, written into buffers the block encoder owns.
    struct SequenceStore {
        let sequences: UnsafeMutablePointer<Sequence>
        let literals: UnsafeMutablePointer<UInt8>
        /// The input's end: a short literal run is copied 16 bytes at a time when they lie before it.
        let inputEnd: UnsafePointer<UInt8>
        var count = 0
        var literalCount = 0
        /// Whether the sequences' offsets are offset values (`Sequence`), as the fast strategy
        /// stores them.
        var offsetValues = false

        /// Appends `n` literals from `from`.
        @inline(__always)
        mutating func addLiterals(_ from: UnsafePointer<UInt8>, _ n: Int) {
            let to = UnsafeMutableRawPointer(literals + literalCount)
            if n <= 16 && from + 16 <= inputEnd {
                // Safe: the literal buffer has 16 bytes beyond a block's worth.
                to.storeBytes(of: load64(from), as: UInt64.self)
                to.storeBytes(of: load64(from + 8), toByteOffset: 8, as: UInt64.self)
            } else {
                to.copyMemory(from: from, byteCount: n)
            }
            literalCount += n
        }

        /// Appends a sequence: `literals` bytes from `from`, then a match of `length` at `offset`.
        @inline(__always)
        mutating func add(_ from: UnsafePointer<UInt8>, literals n: Int, length: Int, offset: Int) {
            addLiterals(from, n)
            assert(count < BlockEncoder.maximumSequences && length >= 4, "a match shorter than 4 bytes")
            sequences[count] = Sequence(
                literals: UInt32(truncatingIfNeeded: n), length: UInt32(truncatingIfNeeded: length),
                offset: UInt32(truncatingIfNeeded: offset))
            count += 1
        }
    }

    /// Encodes blocks; owns the buffers of one block's sequences, literals, codes and bitstream.
    ///
    /// Safe to send: a frame takes one from `spareEncoders` and uses it alone until it gives it back.
    final class BlockEncoder: @unchecked Sendable {
        /// A match is at least 4 bytes long, so a block has fewer sequences than this.
        static let maximumSequences = ZstdCompressor.blockSize / 4 + 8
        let sequences = UnsafeMutablePointer<Sequence>.allocate(capacity: maximumSequences)
        let literals = UnsafeMutablePointer<UInt8>.allocate(capacity: ZstdCompressor.blockSize + 32)
        let codes = UnsafeMutablePointer<UInt8>.allocate(capacity: 3 * maximumSequences)
        let offsetValues = UnsafeMutablePointer<UInt32>.allocate(capacity: maximumSequences)
        /// The sequences' bitstream: at most 27 bits of states and 63 of extra bits a sequence,
        /// the final states, and an 8-byte store's overshoot.
        static let bitCapacity = maximumSequences * 12 + 64
        let bits = UnsafeMutableRawPointer.allocate(byteCount: bitCapacity, alignment: 8)

        /// A finished frame's match tables, kept for the next frame's (`MatchState` takes them).
        var hashStorage: [Int32] = []
        var chainStorage: [Int32] = []

        /// Takes `state`'s tables for the next frame, unless they are the deep levels' large ones.
        func keep(_ state: inout MatchState) {
            let largest = 1 << 18
            if state.hash.count <= largest { swap(&hashStorage, &state.hash) }
            if state.chain.count <= largest { swap(&chainStorage, &state.chain) }
        }

        deinit {
            sequences.deallocate()
            literals.deallocate()
            codes.deallocate()
            offsetValues.deallocate()
            bits.deallocate()
        }

        func encode(
            _ base: UnsafePointer<UInt8>, start: Int, end: Int, inputEnd: UnsafePointer<UInt8>, last: Bool,
            state: inout MatchState, into out: inout [UInt8]
        ) {
            let count = end - start
            let lastBit: UInt64 = last ? 1 : 0
            // A block of one repeated byte.
            if count >= 16 && ZstdCompressor.matchLength(base + start, base + start + 1, limit: count - 1) == count - 1 {
                ZstdCompressor.appendLE(&out, lastBit | 1 << 1 | UInt64(count) << 3, 3)
                out.append(base[start])
                return
            }
            var store = SequenceStore(sequences: sequences, literals: literals, inputEnd: inputEnd)
            let savedRepeats = state.repeats
            let savedOffsets = (state.lastOffset, state.secondOffset)
            if count > 16 {
                ZstdCompressor.findSequences(base, start: start, end: end, state: &state, store: &store)
            } else {
                store.addLiterals(base + start, count)
            }
            // The block header's place, then the body in place after it.
            let headerAt = out.count
            ZstdCompressor.appendLE(&out, 0, 3)
            ZstdCompressor.encodeLiterals(UnsafeBufferPointer(start: literals, count: store.literalCount), into: &out)
            encodeSequences(store.count, offsetValues: store.offsetValues, repeats: &state.repeats, into: &out)
            let size = out.count - headerAt - 3
            // RFC 8878 §3.1.1.2.4: a block's size may not exceed its maximum.
            if size < count && size <= ZstdCompressor.blockSize {
                let header = lastBit | 2 << 1 | UInt64(size) << 3
                out[headerAt] = UInt8(truncatingIfNeeded: header)
                out[headerAt + 1] = UInt8(truncatingIfNeeded: header >> 8)
                out[headerAt + 2] = UInt8(truncatingIfNeeded: header >> 16)
            } else {
                // Stored raw: the decoder's repeat offsets stay as they were.
                out.removeSubrange(headerAt...)
                state.repeats = savedRepeats
                (state.lastOffset, state.secondOffset) = savedOffsets
                ZstdCompressor.appendLE(&out, lastBit | UInt64(count) << 3, 3)
                out.append(contentsOf: UnsafeBufferPointer(start: base + start, count: count))
            }
        }

        /// The sequences section (RFC 8878 §3.1.1.3.2) of the first `n` sequences: offsets
        /// turned into offset values against the repeat offsets (which it updates as the decoder
        /// will), unless they are `given` as offset values (by the fast strategy, which tracks the
        /// decoder's repeat offsets itself); codes, tables, the bitstream.
        func encodeSequences(
            _ n: Int, offsetValues given: Bool, repeats: inout (UInt32, UInt32, UInt32), into out: inout [UInt8]
        ) {
            if n < 128 {
                out.append(UInt8(n))
            } else if n < 0x7F00 {
                out.append(UInt8(128 + (n >> 8)))
                out.append(UInt8(n & 0xFF))
            } else {
                out.append(255)
                ZstdCompressor.appendLE(&out, UInt64(n - 0x7F00), 2)
            }
            guard n > 0 else { return }
            let llCodes = codes, mlCodes = codes + n, ofCodes = codes + 2 * n
            var llHistogram = [Int](repeating: 0, count: 36)
            var mlHistogram = [Int](repeating: 0, count: 53)
            var ofHistogram = [Int](repeating: 0, count: 32)
            var (r0, r1, r2) = (Int(repeats.0), Int(repeats.1), Int(repeats.2))
            ZstdCompressor.literalLengthCodes.withUnsafeBufferPointer { llTable in
                ZstdCompressor.matchLengthCodes.withUnsafeBufferPointer { mlTable in
                    llHistogram.withUnsafeMutableBufferPointer { llCount in
                        mlHistogram.withUnsafeMutableBufferPointer { mlCount in
                            ofHistogram.withUnsafeMutableBufferPointer { ofCount in
                                for i in 0 ..< n {
                                    let s = sequences[i]
                                    let o = s.offset
                                    let value: UInt32
                                    if given {
                                        value = o
                                    } else {
                                        let offset = Int(o), code: Int
                                        if s.literals > 0 {
                                            code = offset == r0 ? 1 : offset == r1 ? 2 : offset == r2 ? 3 : offset + 3
                                        } else {
                                            code = offset == r1 ? 1 : offset == r2 ? 2 : (r0 > 1 && offset == r0 - 1) ? 3 : offset + 3
                                        }
                                        // The repeat offsets as the decoder will update them, by its own function.
                                        _ = resolveOffset(code, literalLength: Int(s.literals), &r0, &r1, &r2)
                                        value = UInt32(truncatingIfNeeded: code)
                                    }
                                    offsetValues[i] = value
                                    let literalCount = Int(s.literals), v = Int(s.length) - 3
                                    // Safe: the tables cover 0 ..< 64 and 0 ..< 128, and the
                                    // formulas give at most 35 and 52 for a block's lengths.
                                    let ll =
                                        literalCount < 64
                                        ? Int(llTable[literalCount]) : (Int.bitWidth - 1 - literalCount.leadingZeroBitCount) + 19
                                    let ml = v < 128 ? Int(mlTable[v]) : (Int.bitWidth - 1 - v.leadingZeroBitCount) + 36
                                    let of = UInt32.bitWidth - 1 - value.leadingZeroBitCount
                                    llCodes[i] = UInt8(truncatingIfNeeded: ll)
                                    mlCodes[i] = UInt8(truncatingIfNeeded: ml)
                                    ofCodes[i] = UInt8(truncatingIfNeeded: of)
                                    llCount[ll] += 1
                                    mlCount[ml] += 1
                                    ofCount[of] += 1
                                }
                            }
                        }
                    }
                }
            }
            repeats = (UInt32(truncatingIfNeeded: r0), UInt32(truncatingIfNeeded: r1), UInt32(truncatingIfNeeded: r2))
            let ll = ZstdCompressor.chooseTable(
                llHistogram, total: n, maximumLog: 9, predefined: ZstdCompressor.predefinedLiteralLengths, predefinedLog: 6,
                predefinedTable: ZstdCompressor.predefinedTables.0)
            let of = ZstdCompressor.chooseTable(
                ofHistogram, total: n, maximumLog: 8, predefined: ZstdCompressor.predefinedOffsets, predefinedLog: 5,
                predefinedTable: ZstdCompressor.predefinedTables.1)
            let ml = ZstdCompressor.chooseTable(
                mlHistogram, total: n, maximumLog: 9, predefined: ZstdCompressor.predefinedMatchLengths, predefinedLog: 6,
                predefinedTable: ZstdCompressor.predefinedTables.2)
            out.append(ll.mode << 6 | of.mode << 4 | ml.mode << 2)
            out.append(contentsOf: ll.description)
            out.append(contentsOf: of.description)
            out.append(contentsOf: ml.description)
            let written = ll.table.withTables { llTable in
                of.table.withTables { ofTable in
                    ml.table.withTables { mlTable in
                        writeSequenceBits(n, ll: llTable, of: ofTable, ml: mlTable)
                    }
                }
            }
            out.append(contentsOf: UnsafeRawBufferPointer(start: bits, count: written))
        }

        /// Writes the sequences' bitstream into `bits`, the last sequence first (its codes start
        /// the three states); returns its byte count. The bits as `ZstdBitWriter` lays them out,
        /// written from a register stored 8 bytes at a time: once a sequence, unless its extra
        /// bits would overfill the register (then after its states and after its lengths too).
        func writeSequenceBits(_ n: Int, ll: ZstdFSEEncoder.Tables, of: ZstdFSEEncoder.Tables, ml: ZstdFSEEncoder.Tables) -> Int {
            let llCodes = codes, mlCodes = codes + n, ofCodes = codes + 2 * n
            var writer = ZstdRegisterBitWriter(bits)
            ZstdSequenceTable.Field.literalLengthBits.withUnsafeBufferPointer { llBits in
                ZstdSequenceTable.Field.matchLengthBits.withUnsafeBufferPointer { mlBits in
                    ZstdSequenceTable.Field.literalLengthBase.withUnsafeBufferPointer { llBase in
                        ZstdSequenceTable.Field.matchLengthBase.withUnsafeBufferPointer { mlBase in
                            // Safe: the codes index the tables' 36 and 53 entries.
                            /// Sequence `i`'s extra bits, the register holding at most 7 bits
                            /// more than `room` allows (the lengths' are below their code's base
                            /// plus 1 << bits, so need no mask).
                            @inline(__always) func extraBits(_ i: Int, room: Int) {
                                let s = sequences[i]
                                let lc = Int(llCodes[i]), mc = Int(mlCodes[i]), oc = Int(ofCodes[i])
                                let lb = Int(llBits[lc]), mb = Int(mlBits[mc])
                                // Lengths at most 16 bits each, an offset value at most 31.
                                let split = lb &+ mb &+ oc > room
                                if split { writer.flush() }
                                writer.add(below: UInt64(s.literals &- llBase[lc]), lb)
                                writer.add(below: UInt64(s.length &- mlBase[mc]), mb)
                                if split { writer.flush() }
                                writer.add(UInt64(offsetValues[i]), oc)
                                writer.flush()
                            }
                            let lastIndex = n - 1
                            var mlState = ml.initialState(Int(mlCodes[lastIndex]))
                            var ofState = of.initialState(Int(ofCodes[lastIndex]))
                            var llState = ll.initialState(Int(llCodes[lastIndex]))
                            extraBits(lastIndex, room: 0)
                            var i = lastIndex
                            while i > 0 {
                                i -= 1
                                // At most 7 bits pending and 9 + 8 + 9 of states (the logs
                                // `chooseTable` allows): 33, so 30 bits of extras fit in 63.
                                ofState = of.encode(Int(ofCodes[i]), state: ofState, into: &writer)
                                mlState = ml.encode(Int(mlCodes[i]), state: mlState, into: &writer)
                                llState = ll.encode(Int(llCodes[i]), state: llState, into: &writer)
                                extraBits(i, room: 30)
                            }
                            writer.add(UInt64(mlState), ml.accuracyLog)
                            writer.add(UInt64(ofState), of.accuracyLog)
                            writer.add(UInt64(llState), ll.accuracyLog)
                            writer.flush()
                        }
                    }
                }
            }
            return writer.close()
        }
    }

    /// The literals section (RFC 8878 §3.1.1.3.1).
    static func encodeLiterals(_ literals: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) {
        let n = literals.count
        func rawHeader(_ type: UInt64) {
            if n < 32 {
                out.append(UInt8(type | UInt64(n) << 3))
            } else if n < 4096 {
                appendLE(&out, type | 1 << 2 | UInt64(n) << 4, 2)
            } else {
                appendLE(&out, type | 3 << 2 | UInt64(n) << 4, 3)
            }
        }
        func raw() {
            rawHeader(0)
            out.append(contentsOf: literals)
        }
        guard n >= 64 else { return raw() }
        var histogram = [Int](repeating: 0, count: 256)
        histogram.withUnsafeMutableBufferPointer { h in
            // Four tables, so that runs of one byte do not wait on one counter.
            var h1 = [Int](repeating: 0, count: 256), h2 = h1, h3 = h1
            h1.withUnsafeMutableBufferPointer { h1 in
                h2.withUnsafeMutableBufferPointer { h2 in
                    h3.withUnsafeMutableBufferPointer { h3 in
                        var i = 0
                        while i + 4 <= n {
                            h[Int(literals[i])] &+= 1
                            h1[Int(literals[i + 1])] &+= 1
                            h2[Int(literals[i + 2])] &+= 1
                            h3[Int(literals[i + 3])] &+= 1
                            i += 4
                        }
                        while i < n {
                            h[Int(literals[i])] += 1
                            i += 1
                        }
                        for s in 0 ..< 256 { h[s] += h1[s] + h2[s] + h3[s] }
                    }
                }
            }
        }
        if histogram[Int(literals[0])] == n {
            rawHeader(1)
            out.append(literals[0])
            return
        }
        guard let huffman = ZstdHuffmanEncoder(histogram: histogram) else { return raw() }
        // The coded size, before writing it.
        var bits = 0
        for s in 0 ..< 256 where histogram[s] > 0 { bits += histogram[s] * Int(huffman.lengths[s]) }
        let fourStreams = n >= 256
        let estimate = huffman.description.count + bits / 8 + (fourStreams ? 10 : 1)
        guard estimate + 8 < n else { return raw() }
        var streams: [[UInt8]] = []
        if fourStreams {
            let segment = (n + 3) / 4
            for i in 0 ..< 4 {
                let a = min(n, i * segment), b = min(n, a + segment)
                streams.append(huffmanStream(literals, a ..< (i == 3 ? n : b), huffman))
            }
        } else {
            streams.append(huffmanStream(literals, 0 ..< n, huffman))
        }
        var compressed = huffman.description.count + streams.reduce(0) { $0 + $1.count }
        if fourStreams { compressed += 6 }
        guard compressed < n - 8 else { return raw() }
        let type: UInt64 = 2
        if !fourStreams {
            appendLE(&out, type | UInt64(n) << 4 | UInt64(compressed) << 14, 3)
        } else if n < 1024 && compressed < 1024 {
            appendLE(&out, type | 1 << 2 | UInt64(n) << 4 | UInt64(compressed) << 14, 3)
        } else if n < 16384 && compressed < 16384 {
            appendLE(&out, type | 2 << 2 | UInt64(n) << 4 | UInt64(compressed) << 18, 4)
        } else {
            appendLE(&out, type | 3 << 2 | UInt64(n) << 4 | UInt64(compressed) << 22, 5)
        }
        out.append(contentsOf: huffman.description)
        if fourStreams {
            for i in 0 ..< 3 { appendLE(&out, UInt64(streams[i].count), 2) }
        }
        for s in streams { out.append(contentsOf: s) }
    }

    /// One Huffman-coded stream of `literals[range]`: the last byte first, so the decoder, reading
    /// backward, meets the first byte first. The bits as `ZstdBitWriter` lays them out (the first
    /// in the lowest bit, little-endian bytes, a final 1-bit, zero padding to a byte), written
    /// from a register: after every four codes (at most 44 bits on top of 7 pending) its eight
    /// bytes are stored and the whole bytes among them passed over.
    static func huffmanStream(_ literals: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ huffman: ZstdHuffmanEncoder) -> [UInt8] {
        // At most 11 bits a byte, the closing bit, and the last 8-byte store's overshoot.
        let capacity = range.count * ZstdHuffmanEncoder.maximumBits / 8 + 16
        return [UInt8](unsafeUninitializedCapacity: capacity) { out, initialized in
            initialized = 0
            guard let base = out.baseAddress else { return }
            let o = UnsafeMutableRawPointer(base)
            var accumulator: UInt64 = 0, bits = 0, position = 0
            huffman.codes.withUnsafeBufferPointer { codes in
                huffman.lengths.withUnsafeBufferPointer { lengths in
                    // Safe: a literal indexes the 256-entry tables; a code is below 1 << its
                    // length (canonical codes), so needs no mask.
                    @inline(__always) func put(_ i: Int) {
                        let s = Int(literals[i])
                        accumulator |= UInt64(codes[s]) &<< UInt64(truncatingIfNeeded: bits)
                        bits &+= Int(lengths[s])
                    }
                    // Safe: position + 8 <= capacity, as each byte passed over holds 8 bits of
                    // codes of at most 11 bits a literal.
                    @inline(__always) func flush() {
                        o.storeBytes(of: accumulator.littleEndian, toByteOffset: position, as: UInt64.self)
                        position &+= bits &>> 3
                        accumulator = accumulator &>> UInt64(truncatingIfNeeded: bits & ~7)
                        bits &= 7
                    }
                    let lower = range.lowerBound
                    var i = range.upperBound
                    while (i &- lower) & 3 != 0 {
                        i &-= 1
                        put(i)
                    }
                    flush()
                    while i > lower {
                        put(i &- 1)
                        put(i &- 2)
                        put(i &- 3)
                        put(i &- 4)
                        i &-= 4
                        flush()
                    }
                }
            }
            accumulator |= 1 &<< UInt64(bits)
            bits += 1
            o.storeBytes(of: accumulator.littleEndian, toByteOffset: position, as: UInt64.self)
            initialized = position + (bits + 7) / 8
        }
    }

    // MARK: Sequences

    static let literalLengthCodes: [UInt8] = (0 ..< 64).map { v in
        UInt8(ZstdSequenceTable.Field.literalLengthBase.lastIndex { $0 <= UInt32(v) } ?? 0)
    }
    static let matchLengthCodes: [UInt8] = (0 ..< 128).map { v in
        UInt8(ZstdSequenceTable.Field.matchLengthBase.lastIndex { $0 <= UInt32(v + 3) } ?? 0)
    }

    /// The predefined distributions (RFC 8878 §3.1.1.3.2.2).
    static let predefinedLiteralLengths: [Int16] =
        [4, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 2, 1, 1, 1, 1, 1, -1, -1, -1, -1]
    static let predefinedMatchLengths: [Int16] =
        [
            1, 4, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
            1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1, -1, -1,
        ]
    static let predefinedOffsets: [Int16] =
        [1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1]
    static let predefinedTables = (
        ZstdFSEEncoder(counts: predefinedLiteralLengths, accuracyLog: 6),
        ZstdFSEEncoder(counts: predefinedOffsets, accuracyLog: 5),
        ZstdFSEEncoder(counts: predefinedMatchLengths, accuracyLog: 6)
    )

    /// How one field's codes are coded: the mode (0 predefined, 1 RLE, 2 compressed), the table
    /// and what goes in the section before the bitstream.
    static func chooseTable(
        _ histogram: [Int], total: Int, maximumLog: Int, predefined: [Int16], predefinedLog: Int,
        predefinedTable: ZstdFSEEncoder
    ) -> (mode: UInt8, table: ZstdFSEEncoder, description: [UInt8]) {
        var maxSymbol = 0
        var distinct = 0
        for (s, h) in histogram.enumerated() where h > 0 {
            maxSymbol = s
            distinct += 1
        }
        if distinct == 1 {
            // RLE: one symbol, no bits per state.
            var counts = [Int16](repeating: 0, count: maxSymbol + 1)
            counts[maxSymbol] = 1
            return (1, ZstdFSEEncoder(counts: counts, accuracyLog: 0), [UInt8(maxSymbol)])
        }
        let predefinedCost = ZstdFSEEncoder.cost(histogram, counts: predefined, accuracyLog: predefinedLog)
        let log = ZstdFSEEncoder.accuracyLog(total: total, maximumSymbol: maxSymbol, maximum: maximumLog)
        if distinct < 1 << log {
            let counts = ZstdFSEEncoder.normalize(Array(histogram[0 ... maxSymbol]), total: total, accuracyLog: log)
            let description = ZstdFSEEncoder.description(counts, accuracyLog: log)
            if let fitted = ZstdFSEEncoder.cost(histogram, counts: counts, accuracyLog: log) {
                if predefinedCost == nil || fitted + Double(8 * description.count) < predefinedCost! {
                    return (2, ZstdFSEEncoder(counts: counts, accuracyLog: log), description)
                }
            }
        }
        return (0, predefinedTable, [])
    }
}
