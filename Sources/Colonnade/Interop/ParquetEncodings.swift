/// Parquet's delta and split encodings, each turned into the PLAIN bytes of the same values so
/// the reader's PLAIN path does the rest (written from the Parquet format's Encodings.md):
///
/// - `DELTA_BINARY_PACKED` (INT32, INT64): a header (block size, miniblocks per block, value
///   count, first value), then blocks of a zigzag minimum delta, one bit width per miniblock
///   (0–64) and the miniblocks' deltas bit-packed least significant bit first. Values wrap in
///   the column's width, as the writers' arithmetic does.
/// - `DELTA_LENGTH_BYTE_ARRAY`: the lengths, delta-binary-packed, then the bytes one after another.
/// - `DELTA_BYTE_ARRAY` (front coding): prefix lengths and suffixes (as above); each value is the
///   previous value's first `prefix` bytes, then its suffix.
/// - `BYTE_STREAM_SPLIT` (FLOAT, DOUBLE, INT32, INT64, FIXED_LEN_BYTE_ARRAY): byte `j` of every
///   value, then byte `j + 1` of every value, …
///
/// Every length, width and count is checked against the bytes there are: any input gives the
/// values or a `malformed`/`truncated` error at its byte, and work and memory are bounded by the
/// page's size and its value count.
enum ParquetEncodings {
    /// `count` values of `encoding` in `bytes` as PLAIN bytes: little-endian fixed-width values
    /// (`width` bytes each), or for BYTE_ARRAY a 4-byte length before each value.
    static func plain(
        _ bytes: UnsafeRawBufferPointer, encoding: ParquetFormat.Encoding, physical: ParquetFormat.PhysicalType,
        width: Int, count: Int, file: String, fileOffset: Int, column: String
    ) throws(InteropError) -> [UInt8] {
        var reader = Reader(bytes: bytes, file: file, fileOffset: fileOffset, column: column)
        switch (encoding, physical) {
        case (.deltaBinaryPacked, .int32), (.deltaBinaryPacked, .int64):
            let values = try reader.deltaBinaryPacked(expected: count, bits: physical == .int32 ? 32 : 64)
            return fixedWidth(values, width: physical == .int32 ? 4 : 8)
        case (.byteStreamSplit, .float), (.byteStreamSplit, .double), (.byteStreamSplit, .int32), (.byteStreamSplit, .int64),
            (.byteStreamSplit, .fixedLenByteArray):
            guard width > 0 else { throw reader.bad(0, "BYTE_STREAM_SPLIT of values without a width") }
            let (needed, overflow) = count.multipliedReportingOverflow(by: width)
            guard !overflow, needed <= bytes.count else {
                throw .truncated(file: file, offset: fileOffset, needed: overflow ? Int.max : needed)
            }
            return [UInt8](unsafeUninitializedCapacity: needed) { out, initialized in
                // Safe: needed bytes are read from `bytes` and written to `out`.
                for j in 0 ..< width {
                    let stream = j * count
                    for i in 0 ..< count { out[i * width + j] = bytes[stream + i] }
                }
                initialized = needed
            }
        case (.deltaLengthByteArray, .byteArray):
            let lengths = try reader.deltaBinaryPacked(expected: count, bits: 32)
            return try reader.byteArrays(lengths: lengths, prefixes: nil)
        case (.deltaByteArray, .byteArray), (.deltaByteArray, .fixedLenByteArray):
            let prefixes = try reader.deltaBinaryPacked(expected: count, bits: 32)
            let suffixes = try reader.deltaBinaryPacked(expected: count, bits: 32)
            return try reader.byteArrays(lengths: suffixes, prefixes: prefixes)
        default:
            throw .unsupportedColumn(file: file, column: column, type: "pages in the \(encoding) encoding for \(physical) values")
        }
    }

    static func fixedWidth(_ values: [Int64], width: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: values.count * width) { out, initialized in
            let raw = UnsafeMutableRawPointer(out.baseAddress!)
            for (i, v) in values.enumerated() {
                if width == 4 {
                    raw.storeBytes(of: Int32(truncatingIfNeeded: v).littleEndian, toByteOffset: 4 * i, as: Int32.self)
                } else {
                    raw.storeBytes(of: v.littleEndian, toByteOffset: 8 * i, as: Int64.self)
                }
            }
            initialized = values.count * width
        }
    }

    /// A cursor over one page's bytes.
    struct Reader {
        let bytes: UnsafeRawBufferPointer
        let file: String
        let fileOffset: Int
        let column: String
        var position = 0

        init(bytes: UnsafeRawBufferPointer, file: String, fileOffset: Int, column: String) {
            self.bytes = bytes
            self.file = file
            self.fileOffset = fileOffset
            self.column = column
        }

        func bad(_ at: Int, _ detail: String) -> InteropError {
            .malformed(file: file, offset: fileOffset + at, detail: "in '\(column)': \(detail)")
        }

        /// An unsigned LEB128 of at most 10 bytes.
        mutating func uleb() throws(InteropError) -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            let start = position
            while true {
                guard position < bytes.count else { throw .truncated(file: file, offset: fileOffset + position, needed: 1) }
                let b = bytes[position]
                position += 1
                guard shift < 64, shift < 63 || b & 0x7E == 0 else { throw bad(start, "a ULEB128 longer than 64 bits") }
                value |= UInt64(b & 0x7F) << shift
                if b & 0x80 == 0 { return value }
                shift += 7
            }
        }

        mutating func zigzag() throws(InteropError) -> Int64 {
            let u = try uleb()
            return Int64(bitPattern: (u >> 1) ^ (0 &- (u & 1)))
        }

        /// A DELTA_BINARY_PACKED run of at least `expected` values (the page's count; the run
        /// may say more for BYTE_ARRAY sections it is part of, never fewer), wrapping in `bits`.
        mutating func deltaBinaryPacked(expected: Int, bits: Int) throws(InteropError) -> [Int64] {
            let start = position
            let blockSize = try uleb(), miniblocks = try uleb(), total = try uleb()
            var last = try zigzag()
            guard blockSize > 0, blockSize % 128 == 0, blockSize <= 1 << 20, miniblocks > 0, blockSize % miniblocks == 0,
                (blockSize / miniblocks) % 32 == 0
            else {
                throw bad(start, "DELTA_BINARY_PACKED header: block size \(blockSize) with \(miniblocks) miniblocks")
            }
            // Each value takes at least no bytes (width 0), so the count must be bounded by the
            // page's count, not the bytes: the caller's `expected`.
            guard total == UInt64(expected) else {
                throw bad(start, "DELTA_BINARY_PACKED run of \(total) values where the page has \(expected)")
            }
            let n = Int(total)
            let perMiniblock = Int(blockSize / miniblocks), miniblockCount = Int(miniblocks)
            var out = [Int64]()
            out.reserveCapacity(n)
            if n > 0 { out.append(wrap(last, bits)) }
            while out.count < n {
                let minDelta = try zigzag()
                guard bytes.count - position >= miniblockCount else {
                    throw .truncated(file: file, offset: fileOffset + position, needed: miniblockCount)
                }
                let widths = position
                position += miniblockCount
                for m in 0 ..< miniblockCount where out.count < n {
                    let width = Int(bytes[widths + m])
                    guard width <= bits else { throw bad(widths + m, "a miniblock bit width of \(width) for \(bits)-bit values") }
                    // A miniblock's bytes are all present, padded, while it holds any value.
                    let length = perMiniblock * width / 8
                    guard bytes.count - position >= length else {
                        throw .truncated(file: file, offset: fileOffset + position, needed: length)
                    }
                    let take = Swift.min(perMiniblock, n - out.count)
                    for i in 0 ..< take {
                        let delta = unpack(at: position, index: i, width: width)
                        last = wrap(last &+ minDelta &+ Int64(bitPattern: delta), bits)
                        out.append(last)
                    }
                    position += length
                }
            }
            return out
        }

        /// Value `index` of a run of `width`-bit values packed least significant bit first.
        @inline(__always)
        func unpack(at start: Int, index: Int, width: Int) -> UInt64 {
            guard width > 0 else { return 0 }
            let bit = index * width
            var value: UInt64 = 0
            var got = 0
            var byte = start + bit / 8, shift = bit % 8
            while got < width {
                // Safe: the caller checked the miniblock's bytes are there.
                let b = UInt64(bytes[byte]) >> UInt64(shift)
                value |= b << UInt64(got)
                got += 8 - shift
                shift = 0
                byte += 1
            }
            return width == 64 ? value : value & ((1 << UInt64(width)) - 1)
        }

        /// The most PLAIN bytes a page of `count` bytes may expand to: 256 times, plus 16 MiB.
        static func maximumExpansion(_ count: Int) -> Int { count.multipliedReportingOverflow(by: 256).partialValue + (16 << 20) }

        func wrap(_ v: Int64, _ bits: Int) -> Int64 { bits == 32 ? Int64(Int32(truncatingIfNeeded: v)) : v }

        /// PLAIN byte arrays from `lengths` (suffix lengths with `prefixes`) and the bytes from
        /// `position` on.
        mutating func byteArrays(lengths: [Int64], prefixes: [Int64]?) throws(InteropError) -> [UInt8] {
            var out = [UInt8]()
            out.reserveCapacity(bytes.count - position + 4 * lengths.count)
            var previous: Range<Int> = 0 ..< 0  // the previous value in `out` (after its length)
            for (i, l) in lengths.enumerated() {
                guard l >= 0, l <= Int64(bytes.count - position) else {
                    throw l < 0
                        ? bad(position, "a byte array length of \(l)")
                        : .truncated(file: file, offset: fileOffset + position, needed: Int(l))
                }
                let prefix = prefixes.map { Int($0[i]) } ?? 0
                guard prefix >= 0, prefix <= previous.count else {
                    throw bad(position, "a prefix of \(prefix) bytes of a previous value of \(previous.count)")
                }
                let length = prefix + Int(l)
                guard length <= UInt32.max else { throw bad(position, "a byte array of \(length) bytes") }
                // Front coding can repeat a long prefix for every value: bound the expansion like
                // a zip bomb's, by the page's size (a page of one ticker repeated stays far below).
                guard out.count + 4 + length <= Self.maximumExpansion(bytes.count) else {
                    throw bad(
                        position,
                        "front-coded values expanding past \(Self.maximumExpansion(bytes.count)) bytes from a page of \(bytes.count)")
                }
                withUnsafeBytes(of: UInt32(length).littleEndian) { out += $0 }
                let start = out.count
                if prefix > 0 { out.append(contentsOf: out[previous.lowerBound ..< previous.lowerBound + prefix]) }
                out.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[position ..< position + Int(l)]))
                position += Int(l)
                previous = start ..< out.count
            }
            return out
        }
    }
}
