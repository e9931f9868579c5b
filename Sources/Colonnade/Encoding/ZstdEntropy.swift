#if canImport(Glibc)
import Glibc
#endif

/// The entropy coders of the Zstandard compressor (RFC 8878 §4): a forward bit writer, FSE
/// (tANS) encoding tables with their table descriptions, and Huffman codes for literals.
/// ARCHITECTURE.md, Encoding.

/// Writes a bitstream that a Zstandard backward reader reads: fields are appended low bit first,
/// little-endian, and `close()` adds the final 1-bit and pads to a whole byte, so the last field
/// written is the first one read.
struct ZstdBitWriter {
    var bytes: [UInt8] = []
    private var accumulator: UInt64 = 0
    private var count = 0

    init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    /// Appends the low `bits` bits of `value` (`bits` ≤ 32).
    @inline(__always)
    mutating func add(_ value: UInt64, _ bits: Int) {
        accumulator |= (value & ((1 << UInt64(bits)) &- 1)) << UInt64(count)
        count += bits
        if count >= 32 {
            let word = UInt32(truncatingIfNeeded: accumulator)
            bytes.append(UInt8(truncatingIfNeeded: word))
            bytes.append(UInt8(truncatingIfNeeded: word >> 8))
            bytes.append(UInt8(truncatingIfNeeded: word >> 16))
            bytes.append(UInt8(truncatingIfNeeded: word >> 24))
            accumulator >>= 32
            count -= 32
        }
    }

    /// Appends the final 1-bit and the pending bits, padded with zeros to a byte.
    mutating func close() {
        add(1, 1)
        while count > 0 {
            bytes.append(UInt8(truncatingIfNeeded: accumulator))
            accumulator >>= 8
            count -= 8
        }
        count = 0
        accumulator = 0
    }
}

/// `ZstdBitWriter`'s layout, written into a caller's buffer from a 64-bit register: `add` puts
/// fields in the register, `flush` stores its eight bytes and passes over the whole ones among
/// them. The caller flushes before the register would hold more than 63 bits, and its buffer has
/// room for an 8-byte store at every byte position it writes.
struct ZstdRegisterBitWriter {
    let start: UnsafeMutableRawPointer
    private var position = 0
    private var accumulator: UInt64 = 0
    private var count = 0

    init(_ start: UnsafeMutableRawPointer) { self.start = start }

    /// Adds the low `bits` bits of `value` (`bits` ≤ 32).
    @inline(__always)
    mutating func add(_ value: UInt64, _ bits: Int) {
        accumulator |= (value & ((1 &<< UInt64(truncatingIfNeeded: bits)) &- 1)) &<< UInt64(truncatingIfNeeded: count)
        count &+= bits
    }

    /// Adds `value`, which is below `1 << bits` (`bits` ≤ 32), without masking it.
    @inline(__always)
    mutating func add(below value: UInt64, _ bits: Int) {
        accumulator |= value &<< UInt64(truncatingIfNeeded: count)
        count &+= bits
    }

    /// Stores the register; keeps the bits of a partial byte.
    @inline(__always)
    mutating func flush() {
        start.storeBytes(of: accumulator.littleEndian, toByteOffset: position, as: UInt64.self)
        position &+= count &>> 3
        accumulator = accumulator &>> UInt64(truncatingIfNeeded: count & ~7)
        count &= 7
    }

    /// Adds the final 1-bit; returns the byte count written.
    mutating func close() -> Int {
        add(1, 1)
        flush()
        return position + (count + 7) / 8
    }
}

/// An FSE encoding table built from a normalized distribution (the encoder's side of the table
/// RFC 8878 §4.1.1 describes): the same symbol spread as the decoder's table, a state table and
/// per-symbol transforms.
struct ZstdFSEEncoder {
    struct Transform {
        var deltaFindState: Int32
        var deltaNbBits: UInt32
    }

    let accuracyLog: Int
    /// `1 << accuracyLog` next states, in encoder form (`size + decoder state`).
    var states: [UInt16]
    var transforms: [Transform]

    /// The table of `counts` (-1: "less than 1"), which sum (a -1 counting 1) to `1 << accuracyLog`.
    init(counts: [Int16], accuracyLog: Int) {
        self.accuracyLog = accuracyLog
        let size = 1 << accuracyLog
        guard accuracyLog > 0 else {
            // RLE: one state, no bits.
            states = [0]
            transforms = [Transform](repeating: Transform(deltaFindState: 0, deltaNbBits: 0), count: counts.count)
            return
        }
        let mask = size - 1
        var spread = [UInt8](repeating: 0, count: size)
        var cumulative = [Int](repeating: 0, count: counts.count + 1)
        var high = size - 1
        for (s, c) in counts.enumerated() {
            if c == -1 {
                cumulative[s + 1] = cumulative[s] + 1
                spread[high] = UInt8(s)
                high -= 1
            } else {
                cumulative[s + 1] = cumulative[s] + Int(max(c, 0))
            }
        }
        let step = (size >> 1) + (size >> 3) + 3
        var position = 0
        for (s, c) in counts.enumerated() where c > 0 {
            for _ in 0 ..< Int(c) {
                spread[position] = UInt8(s)
                repeat { position = (position + step) & mask } while position > high
            }
        }
        states = [UInt16](repeating: 0, count: size)
        var next = cumulative
        for u in 0 ..< size {
            let s = Int(spread[u])
            states[next[s]] = UInt16(size + u)
            next[s] += 1
        }
        transforms = []
        transforms.reserveCapacity(counts.count)
        var total = 0
        for c in counts {
            switch c {
            case 0:
                transforms.append(Transform(deltaFindState: 0, deltaNbBits: UInt32(((accuracyLog + 1) << 16) - size)))
            case -1, 1:
                transforms.append(Transform(deltaFindState: Int32(total - 1), deltaNbBits: UInt32((accuracyLog << 16) - size)))
                total += 1
            default:
                let n = Int(c)
                let maxBitsOut = accuracyLog - (Int.bitWidth - 1 - (n - 1).leadingZeroBitCount)
                let minStatePlus = n << maxBitsOut
                transforms.append(Transform(deltaFindState: Int32(total - n), deltaNbBits: UInt32((maxBitsOut << 16) - minStatePlus)))
                total += n
            }
        }
    }

    /// The tables read without copies or bounds checks, while `withTables` runs.
    struct Tables {
        let states: UnsafeBufferPointer<UInt16>
        let transforms: UnsafeBufferPointer<Transform>
        let accuracyLog: Int

        /// The state that starts encoding (from the end) with `symbol`.
        @inline(__always)
        func initialState(_ symbol: Int) -> Int {
            let t = transforms[symbol]
            let bits = (Int(t.deltaNbBits) + (1 << 15)) >> 16
            let value = (bits << 16) - Int(t.deltaNbBits)
            return Int(states[(value >> bits) + Int(t.deltaFindState)])
        }

        /// Encodes `symbol` from `state`: adds the bits that lead back to it (at most
        /// `accuracyLog`), returns the new state.
        @inline(__always)
        func encode(_ symbol: Int, state: Int, into writer: inout ZstdRegisterBitWriter) -> Int {
            let t = transforms[symbol]
            let bits = (state &+ Int(t.deltaNbBits)) &>> 16
            writer.add(UInt64(truncatingIfNeeded: state), bits)
            return Int(states[(state &>> bits) &+ Int(t.deltaFindState)])
        }
    }

    /// `body` of the tables. Symbols passed to them must be among the table's.
    func withTables<R>(_ body: (Tables) -> R) -> R {
        states.withUnsafeBufferPointer { s in
            transforms.withUnsafeBufferPointer { t in body(Tables(states: s, transforms: t, accuracyLog: accuracyLog)) }
        }
    }

    /// The state that starts encoding (from the end) with `symbol` (`Tables.initialState`).
    func initialState(_ symbol: Int) -> Int {
        withTables { $0.initialState(symbol) }
    }

    /// Encodes `symbol` from `state`: writes the bits that lead back to it, returns the new state.
    @inline(__always)
    func encode(_ symbol: Int, state: Int, into writer: inout ZstdBitWriter) -> Int {
        let t = transforms[symbol]
        let bits = (state + Int(t.deltaNbBits)) >> 16
        writer.add(UInt64(state), bits)
        return Int(states[(state >> bits) + Int(t.deltaFindState)])
    }

    /// Writes the final state (read first by the decoder).
    @inline(__always)
    func flush(_ state: Int, into writer: inout ZstdBitWriter) {
        writer.add(UInt64(state), accuracyLog)
    }

    /// A normalized distribution of `histogram` over `1 << accuracyLog` (no "less than 1"
    /// probabilities: every present symbol gets at least 1).
    /// - Precondition: at least two symbols are present and their number is below the table size.
    static func normalize(_ histogram: [Int], total: Int, accuracyLog: Int) -> [Int16] {
        let size = 1 << accuracyLog
        var counts = [Int16](repeating: 0, count: histogram.count)
        var sum = 0
        var largest = 0
        for (s, h) in histogram.enumerated() where h > 0 {
            let n = max(1, Int((Double(h) * Double(size) / Double(total)).rounded()))
            counts[s] = Int16(n)
            sum += n
            if h > histogram[largest] || histogram[largest] == 0 { largest = s }
        }
        if sum < size {
            counts[largest] += Int16(size - sum)
        }
        while sum > size {
            // Take from the symbols with the most probability, one at a time.
            var best = -1
            for s in counts.indices where counts[s] > 1 && (best < 0 || counts[s] > counts[best]) { best = s }
            counts[best] -= 1
            sum -= 1
        }
        return counts
    }

    /// The table description (RFC 8878 §4.1.1) of `counts`.
    static func description(_ counts: [Int16], accuracyLog: Int) -> [UInt8] {
        var out: [UInt8] = []
        var stream: UInt64 = UInt64(accuracyLog - 5)
        var bitCount = 4
        var remaining = (1 << accuracyLog) + 1
        var threshold = 1 << accuracyLog
        var nbBits = accuracyLog + 1
        var symbol = 0
        var previousIsZero = false
        func flush16() {
            out.append(UInt8(truncatingIfNeeded: stream))
            out.append(UInt8(truncatingIfNeeded: stream >> 8))
            stream >>= 16
            bitCount -= 16
        }
        while symbol < counts.count && remaining > 1 {
            if previousIsZero {
                var start = symbol
                while symbol < counts.count && counts[symbol] == 0 { symbol += 1 }
                while symbol >= start + 24 {
                    start += 24
                    stream |= UInt64(0xFFFF) << UInt64(bitCount)
                    bitCount += 16
                    flush16()
                }
                while symbol >= start + 3 {
                    start += 3
                    stream |= 3 << UInt64(bitCount)
                    bitCount += 2
                }
                stream |= UInt64(symbol - start) << UInt64(bitCount)
                bitCount += 2
                if bitCount > 16 { flush16() }
            }
            var count = Int(counts[symbol])
            symbol += 1
            let maximum = (2 * threshold - 1) - remaining
            remaining -= count < 0 ? -count : count
            count += 1
            if count >= threshold { count += maximum }
            stream |= UInt64(count) << UInt64(bitCount)
            bitCount += nbBits
            if count < maximum { bitCount -= 1 }
            previousIsZero = count == 1
            while remaining < threshold {
                nbBits -= 1
                threshold >>= 1
            }
            if bitCount > 16 { flush16() }
        }
        while bitCount > 0 {
            out.append(UInt8(truncatingIfNeeded: stream))
            stream >>= 8
            bitCount -= 8
        }
        return out
    }

    /// The accuracy log for `total` symbols drawn from `distinct` symbols, the largest `maximumSymbol`.
    static func accuracyLog(total: Int, maximumSymbol: Int, maximum: Int) -> Int {
        let highTotal = Int.bitWidth - 1 - max(1, total - 1).leadingZeroBitCount
        let highSymbol = Int.bitWidth - 1 - max(1, maximumSymbol).leadingZeroBitCount
        var log = min(maximum, highTotal - 1)
        let minimum = min(highTotal + 1, highSymbol + 2)
        log = max(log, minimum, 5)
        return min(log, maximum)
    }

    /// An estimate in bits of coding `histogram` with `counts` (table size `1 << accuracyLog`).
    static func cost(_ histogram: [Int], counts: [Int16], accuracyLog: Int) -> Double? {
        var bits = 0.0
        for (s, h) in histogram.enumerated() where h > 0 {
            guard s < counts.count, counts[s] != 0 else { return nil }
            let p = counts[s] == -1 ? 1.0 : Double(counts[s])
            bits += Double(h) * (Double(accuracyLog) - log2(p))
        }
        return bits
    }
}

/// A Huffman code for literal bytes (RFC 8878 §4.2), codes at most 11 bits, with its tree
/// description.
struct ZstdHuffmanEncoder {
    /// Per byte value: the code (in the low `lengths[s]` bits) and its length (0: absent).
    var codes: [UInt16]
    var lengths: [UInt8]
    /// The tree description (header byte and weights).
    var description: [UInt8]

    static let maximumBits = 11

    /// The code for `histogram` (256 counts), or nil when fewer than two symbols occur or the
    /// weights cannot be described.
    init?(histogram: [Int]) {
        var symbols = (0 ..< 256).filter { histogram[$0] > 0 }
        guard symbols.count >= 2 else { return nil }
        var lengths = [UInt8](repeating: 0, count: 256)
        var weighted = histogram
        while true {
            let l = Self.huffmanLengths(symbols.map { weighted[$0] })
            if l.max() ?? 0 <= Self.maximumBits {
                for (i, s) in symbols.enumerated() { lengths[s] = UInt8(l[i]) }
                break
            }
            // Flatten the distribution until the longest code fits.
            for s in symbols { weighted[s] = (weighted[s] >> 1) | 1 }
        }
        symbols.sort()
        let maxBits = Int(lengths.max() ?? 0)
        var weights = [UInt8](repeating: 0, count: 256)
        for s in symbols { weights[s] = UInt8(maxBits + 1 - Int(lengths[s])) }
        // Canonical codes, as the decoder assigns them: by weight, then symbol; lowest weight first.
        var rankCounts = [Int](repeating: 0, count: 13)
        for s in symbols { rankCounts[Int(weights[s])] += 1 }
        var starts = [Int](repeating: 0, count: 13)
        var position = 0
        for w in 1 ... 12 {
            starts[w] = position
            position += rankCounts[w] << (w - 1)
        }
        guard position == 1 << maxBits else { return nil }
        var codes = [UInt16](repeating: 0, count: 256)
        for s in symbols {
            let w = Int(weights[s])
            codes[s] = UInt16(starts[w] >> (w - 1))
            starts[w] += 1 << (w - 1)
        }
        // The last symbol's weight is implied.
        let last = symbols[symbols.count - 1]
        let explicit = Array(weights[0 ..< last])
        var best: [UInt8]?
        if explicit.count <= 128 {
            var direct: [UInt8] = [UInt8(127 + explicit.count)]
            var i = 0
            while i < explicit.count {
                let hi = explicit[i], lo = i + 1 < explicit.count ? explicit[i + 1] : 0
                direct.append(hi << 4 | lo)
                i += 2
            }
            best = direct
        }
        if let compressed = Self.compressWeights(explicit), compressed.count < 128, best == nil || compressed.count + 1 < best!.count {
            best = [UInt8(compressed.count)] + compressed
        }
        guard let best else { return nil }
        self.codes = codes
        self.lengths = lengths
        self.description = best
    }

    /// Code lengths of a Huffman code for `counts` (all positive), unbounded.
    static func huffmanLengths(_ counts: [Int]) -> [Int] {
        let n = counts.count
        // Two-queue construction over leaves sorted by count.
        let order = counts.indices.sorted { counts[$0] < counts[$1] }
        var weight = order.map { counts[$0] }
        var parent = [Int](repeating: -1, count: 2 * n - 1)
        weight.reserveCapacity(2 * n - 1)
        var leaf = 0, node = n, next = n
        func take() -> Int {
            if leaf < n && (node >= next || weight[leaf] <= weight[node]) {
                leaf += 1
                return leaf - 1
            }
            node += 1
            return node - 1
        }
        while next < 2 * n - 1 {
            let a = take(), b = take()
            weight.append(weight[a] + weight[b])
            parent[a] = next
            parent[b] = next
            next += 1
        }
        var depth = [Int](repeating: 0, count: 2 * n - 1)
        for i in stride(from: 2 * n - 3, through: 0, by: -1) { depth[i] = depth[parent[i]] + 1 }
        var lengths = [Int](repeating: 0, count: n)
        for (i, original) in order.enumerated() { lengths[original] = depth[i] }
        return lengths
    }

    /// The FSE-compressed weights (RFC 8878 §4.2.1.2): a table description, then a stream of two
    /// interleaved states; nil when not possible (fewer than two weights, or a final state the
    /// decoder could not stop at).
    static func compressWeights(_ weights: [UInt8]) -> [UInt8]? {
        guard weights.count >= 2 else { return nil }
        var histogram = [Int](repeating: 0, count: 13)
        var maxSymbol = 0
        for w in weights {
            histogram[Int(w)] += 1
            maxSymbol = max(maxSymbol, Int(w))
        }
        let distinct = histogram.filter { $0 > 0 }.count
        guard distinct >= 2 else { return nil }
        let log = ZstdFSEEncoder.accuracyLog(total: weights.count, maximumSymbol: maxSymbol, maximum: 6)
        guard distinct < 1 << log else { return nil }
        let counts = ZstdFSEEncoder.normalize(Array(histogram[0 ... maxSymbol]), total: weights.count, accuracyLog: log)
        let table = ZstdFSEEncoder(counts: counts, accuracyLog: log)
        let n = weights.count
        // The decoder stops when a state update runs past the stream: the two states the encoder
        // starts from must each read at least one bit.
        guard let decoding = try? ZstdFSETable(counts: counts, accuracyLog: log, offset: 0) else { return nil }
        let size = 1 << log
        var writer = ZstdBitWriter(capacity: n)
        var state1: Int, state2: Int
        var i = n
        if n & 1 == 1 {
            state1 = table.initialState(Int(weights[n - 1]))
            state2 = table.initialState(Int(weights[n - 2]))
            guard decoding.entries[state1 - size].bitCount > 0, decoding.entries[state2 - size].bitCount > 0 else { return nil }
            i = n - 2
            if i > 0 {
                i -= 1
                state1 = table.encode(Int(weights[i]), state: state1, into: &writer)
            }
        } else {
            state2 = table.initialState(Int(weights[n - 1]))
            state1 = table.initialState(Int(weights[n - 2]))
            guard decoding.entries[state1 - size].bitCount > 0, decoding.entries[state2 - size].bitCount > 0 else { return nil }
            i = n - 2
        }
        while i > 0 {
            i -= 1
            state2 = table.encode(Int(weights[i]), state: state2, into: &writer)
            i -= 1
            state1 = table.encode(Int(weights[i]), state: state1, into: &writer)
        }
        table.flush(state2, into: &writer)
        table.flush(state1, into: &writer)
        writer.close()
        return ZstdFSEEncoder.description(counts, accuracyLog: log) + writer.bytes
    }
}
