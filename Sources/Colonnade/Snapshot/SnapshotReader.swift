#if canImport(Glibc)
import Glibc
#endif

extension QuoteTable {
    /// Loads a snapshot file by memory-mapping it: the columns are views into the mapping, nothing
    /// is copied (format: `docs/SNAPSHOT_FORMAT.md`).
    ///
    ///     let table = try QuoteTable.load(from: "snapshots/sample.snapshot")
    ///
    /// Before any payload is touched, the header, the trailer (so a truncated file is detected
    /// before the footer is parsed), the footer's checksum and every offset and length are
    /// validated: in range, 64-byte aligned, not overlapping, consistent with the row count.
    /// The mapping stays valid while any column of the table is alive.
    ///
    /// - Parameters:
    ///   - path: the snapshot file.
    ///   - verify: also hash every payload and compare with its stored checksum, and check that
    ///     dates ascend within each ticker (reads every byte; warm and cold figures in docs/BENCHMARKS.md). With
    ///     `false`, the structure and the footer checksum are still checked, and validity padding
    ///     bits too, but damage inside a payload goes unnoticed.
    /// - Throws: `SnapshotError` naming the file and the section at fault.
    /// - Complexity: O(footer) without verification, O(file) with it.
    public static func load(from path: String, verify: Bool = true) throws(SnapshotError) -> QuoteTable {
        // A 2.x store (a version log): its current version (SnapshotStore).
        if SnapshotStore.isStore(path) { return try SnapshotStore(at: path).table(verify: verify) }
        return try load(SnapshotReader(path: path), verify: verify)
    }

    /// `load(from:verify:)`, verifying on at most `threads` threads (1: the calling thread only).
    public static func load(from path: String, verify: Bool = true, threads: Int) throws(SnapshotError) -> QuoteTable {
        if SnapshotStore.isStore(path) { return try SnapshotStore(at: path).table(verify: verify, threads: threads) }
        return try load(SnapshotReader(path: path), verify: verify, threads: threads)
    }

    /// `load(from:verify:)` from a reader already opened (tests cut the file in between).
    static func load(_ reader: SnapshotReader, verify: Bool, threads: Int = QueryOptions.availableCores) throws(SnapshotError) -> QuoteTable
    {
        do throws(SnapshotError) {
            if let problem = reader.layoutProblems().first { throw problem }
            if verify {
                reader.mapping.populate()  // only now: the layout check has bounded what will be read
                if let problem = reader.checksumProblems(checkSummaries: true, threads: threads).first { throw problem }
            }
            let table = try reader.makeTable(checkDates: verify)
            if reader.mapping.lostPages { throw reader.shrank }
            return table
        } catch {
            // Whatever went wrong came from the zeros a file cut meanwhile reads as.
            if reader.mapping.lostPages { throw reader.shrank }
            throw error
        }
    }

    /// What the snapshot at `path` holds, from its header and footer (payloads are not read).
    /// - Throws: `SnapshotError` as `load(from:verify:)` does for structural problems.
    public static func snapshotInfo(at path: String) throws(SnapshotError) -> SnapshotInfo {
        if SnapshotStore.isStore(path) { return try SnapshotStore(at: path).info() }
        let reader = try SnapshotReader(path: path)
        if let problem = reader.layoutProblems().first { throw problem }
        return reader.info
    }
}

/// Reads and validates a snapshot's header, trailer and footer; then checks payload layout and
/// checksums, and builds the table. Every check that reads the file goes through here.
struct SnapshotReader {
    let path: String
    let mapping: SnapshotMapping
    /// The mapped file's device and inode (a read by path must find the same file).
    let fileIdentity: (device: UInt64, inode: UInt64)

    /// The error for a file cut shorter while it was being read: truncated, with its size now.
    var shrank: SnapshotError {
        var st = stat()
        return .truncated(file: path, expected: mapping.size, actual: stat(path, &st) == 0 ? Int(st.st_size) : 0)
    }
    let majorVersion: UInt16
    let minorVersion: UInt16
    let footerOffset: Int
    let footerLength: Int
    let footer: SnapshotFooter

    /// Opens, maps and validates everything but the payloads' placement and contents: the file
    /// (a non-empty regular file), the header page, the trailer, then the footer's sections
    /// (all of them, or with `.index` only those `SnapshotFooter.Extent.index` names;
    /// `reusing` as `SnapshotFooter.decode` takes it).
    init(
        path: String, extent: SnapshotFooter.Extent = .whole, reusing: SnapshotFooter.DecodedTickers? = nil
    ) throws(SnapshotError) {
        #if _endian(big)
        throw SnapshotError.ioError(file: path, operation: "load (snapshots are little-endian; this host is not)", errno: ENOTSUP)
        #endif
        self.path = path
        (mapping, fileIdentity) = try Self.mapRegularFile(path)
        let bytes = mapping.bytes
        (majorVersion, minorVersion) = try Self.validateHeader(bytes, path: path)
        (footerOffset, footerLength) = try Self.locateFooter(bytes, path: path)
        let footerBytes = UnsafeRawBufferPointer(rebasing: bytes[footerOffset ..< footerOffset + footerLength])
        footer = try SnapshotFooter.decode(
            footerBytes, file: path, rowLimit: bytes.count, extent: extent, reusing: reusing)
    }

    /// Maps the file at `path`, refusing what is not a non-empty regular file.
    private static func mapRegularFile(_ path: String) throws(SnapshotError) -> (SnapshotMapping, (device: UInt64, inode: UInt64)) {
        // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused just below.
        let fd = try SnapshotFile.open(path, O_RDONLY | O_NONBLOCK, file: path, operation: "open")
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw SnapshotError.system(path, "fstat", errno) }
        if SnapshotFile.isDirectory(st) { throw .isADirectory(file: path) }
        guard (st.st_mode & S_IFMT) == S_IFREG else { throw .notARegularFile(file: path, kind: FileTarget.kind(st.st_mode)) }
        let size = Int(st.st_size)
        guard size > 0 else { throw .truncated(file: path, expected: SnapshotFormat.minimumFileSize, actual: 0) }
        return (try SnapshotMapping(fd: fd, size: size, file: path), (UInt64(st.st_dev), UInt64(st.st_ino)))
    }

    /// Checks the header page: magic, major version, checksum, flags and reserved bytes, the
    /// payload start, and the recorded file length against the real one.
    /// - Returns: the format version.
    private static func validateHeader(_ b: UnsafeRawBufferPointer, path: String) throws(SnapshotError) -> (UInt16, UInt16) {
        let size = b.count
        let magicBytes = min(size, 8)
        guard b.prefix(magicBytes).elementsEqual(SnapshotFormat.magic.prefix(magicBytes)) else { throw .notASnapshot(file: path) }
        guard size >= SnapshotFormat.headerSize else {
            throw .truncated(file: path, expected: SnapshotFormat.minimumFileSize, actual: size)
        }
        // Safe: size >= 64 checked above for every header read.
        func u16(_ o: Int) -> UInt16 { UInt16(littleEndian: b.loadUnaligned(fromByteOffset: o, as: UInt16.self)) }
        func u32(_ o: Int) -> UInt32 { UInt32(littleEndian: b.loadUnaligned(fromByteOffset: o, as: UInt32.self)) }
        func u64(_ o: Int) -> UInt64 { UInt64(littleEndian: b.loadUnaligned(fromByteOffset: o, as: UInt64.self)) }
        let majorVersion = u16(8), minorVersion = u16(10)
        guard majorVersion == SnapshotFormat.majorVersion else {
            throw .unsupportedVersion(
                file: path, found: "\(majorVersion).\(minorVersion)",
                supported: "\(SnapshotFormat.majorVersion).x (up to \(SnapshotFormat.majorVersion).\(SnapshotFormat.minorVersion))")
        }
        let recordedLength = u64(16)
        guard size >= SnapshotFormat.payloadStart else {
            throw .truncated(file: path, expected: Int(clamping: max(recordedLength, UInt64(SnapshotFormat.minimumFileSize))), actual: size)
        }
        var page = Array(b.prefix(SnapshotFormat.payloadStart))
        for i in 0 ..< 8 { page[SnapshotFormat.headerChecksumOffset + i] = 0 }
        let headerSum = SnapshotChecksum.hash(page, seed: 0), storedHeaderSum = u64(SnapshotFormat.headerChecksumOffset)
        guard headerSum == storedHeaderSum else {
            throw .checksumMismatch(file: path, section: "header", column: nil, expected: storedHeaderSum, actual: headerSum)
        }
        guard u32(12) == 0 else { throw .malformedHeader(file: path, detail: "unknown header flags \(u32(12))") }
        // Reserved bytes and the header page's padding are zero in 1.x: a reader that ignored them
        // would let a later version's meaning (or hidden data) pass unnoticed.
        if let i = (Array(SnapshotFormat.reservedHeaderBytes) + SnapshotFormat.headerPaddingBytes).first(where: { b[$0] != 0 }) {
            throw .malformedHeader(file: path, detail: "header byte \(i) is \(b[i]), reserved bytes must be 0")
        }
        guard u64(24) == UInt64(SnapshotFormat.payloadStart) else {
            throw .malformedHeader(file: path, detail: "payloads start at \(u64(24)), expected \(SnapshotFormat.payloadStart)")
        }
        guard recordedLength <= UInt64(Int.max) else { throw .malformedHeader(file: path, detail: "file length \(recordedLength)") }
        let fileLength = Int(recordedLength)
        if fileLength > size { throw .truncated(file: path, expected: fileLength, actual: size) }
        if fileLength < size {
            throw .malformedHeader(file: path, detail: "file has \(size) bytes, its header records \(fileLength)")
        }
        return (majorVersion, minorVersion)
    }

    /// Checks the trailer (magic, footer length and checksum) against the header's footer offset.
    /// - Precondition: the header was validated (the file holds at least the header page).
    /// - Returns: where the footer starts and how long it is (it ends where the trailer starts).
    private static func locateFooter(_ b: UnsafeRawBufferPointer, path: String) throws(SnapshotError) -> (Int, Int) {
        let size = b.count
        // Safe: size >= payloadStart (checked by validateHeader), so every read below is in range.
        func u64(_ o: Int) -> UInt64 { UInt64(littleEndian: b.loadUnaligned(fromByteOffset: o, as: UInt64.self)) }
        guard b[(size - 8)...].elementsEqual(SnapshotFormat.magic) else {
            throw .malformedFooter(file: path, section: "trailer", detail: "the closing COLNSNAP magic is missing")
        }
        let recordedFooterLength = u64(size - 16)
        let recordedFooterOffset = u64(32)
        let footerEnd = size - SnapshotFormat.trailerSize
        guard recordedFooterOffset >= UInt64(SnapshotFormat.payloadStart), recordedFooterOffset <= UInt64(footerEnd),
            recordedFooterOffset % UInt64(SnapshotFormat.sectionAlignment) == 0,
            recordedFooterLength == UInt64(footerEnd) - recordedFooterOffset
        else {
            throw .offsetOutOfRange(
                file: path, section: "trailer",
                detail:
                    "footer at \(recordedFooterOffset) of \(recordedFooterLength) bytes does not end at \(footerEnd) (8-aligned, after byte \(SnapshotFormat.payloadStart))"
            )
        }
        let footerOffset = Int(recordedFooterOffset)
        let footerBytes = UnsafeRawBufferPointer(rebasing: b[footerOffset ..< footerEnd])
        let footerSum = SnapshotChecksum.hash(footerBytes, seed: UInt64(footerOffset)), storedFooterSum = u64(size - 24)
        guard footerSum == storedFooterSum else {
            throw .checksumMismatch(file: path, section: "footer", column: nil, expected: storedFooterSum, actual: footerSum)
        }
        return (footerOffset, Int(recordedFooterLength))
    }

    /// Every payload with the name used in messages (`close`, `close.validity`).
    var payloads: [(name: String, payload: SnapshotPayload)] {
        var out = [(String, SnapshotPayload)]()
        for (i, c) in footer.columns.enumerated() {
            out.append((footer.columnName(i), c.values))
            if let v = c.validity { out.append((footer.columnName(i) + ".validity", v)) }
        }
        return out
    }

    /// Placement problems: payloads out of the payload region, misaligned, overlapping, or of a
    /// length the row count does not explain; a ticker index that does not tile the rows.
    func layoutProblems() -> [SnapshotError] {
        var problems = [SnapshotError]()
        let rows = footer.rowCount
        for (i, c) in footer.columns.enumerated() {
            let parts: [(String, SnapshotPayload?, Int)] = [
                (footer.columnName(i), c.values, rows * c.type.byteWidth),
                (footer.columnName(i) + ".validity", c.validity, Bitmask.wordCount(forBits: rows) * 8),
            ]
            for (name, payload, expected) in parts {
                guard let p = payload else { continue }
                if p.offset % SnapshotFormat.payloadAlignment != 0 {
                    problems.append(
                        .offsetOutOfRange(file: path, section: "COLS", detail: "\(name) at offset \(p.offset) is not 64-byte aligned"))
                } else if p.offset < SnapshotFormat.payloadStart || p.offset > footerOffset || p.paddedLength > footerOffset - p.offset {
                    problems.append(
                        .offsetOutOfRange(
                            file: path, section: "COLS",
                            detail:
                                "\(name) at \(p.offset)..<\(p.offset + p.paddedLength) is outside the payload region \(SnapshotFormat.payloadStart)..<\(footerOffset)"
                        ))
                } else if p.length != expected {
                    problems.append(
                        .malformedFooter(
                            file: path, section: "COLS",
                            detail:
                                "\(name) has \(p.length) bytes; \(rows) rows of \(name.hasSuffix(".validity") ? "validity" : "\(c.type)") need \(expected)"
                        ))
                }
            }
        }
        if problems.isEmpty {
            let extents = payloads.filter { $0.payload.length > 0 }.sorted { $0.payload.offset < $1.payload.offset }
            for (a, b) in zip(extents, extents.dropFirst()) where a.payload.offset + a.payload.paddedLength > b.payload.offset {
                problems.append(
                    .offsetOutOfRange(file: path, section: "COLS", detail: "\(a.name) and \(b.name) overlap at \(b.payload.offset)"))
            }
            // Packed: the padded payloads tile 4096 ..< F with no gap (a gap is bytes nothing
            // describes: hidden data, or a sparse hole that every populating load would fault in).
            if problems.isEmpty {
                var expected = SnapshotFormat.payloadStart
                for e in extents {
                    if e.payload.offset != expected {
                        problems.append(
                            .offsetOutOfRange(
                                file: path, section: "COLS",
                                detail: "\(e.name) starts at \(e.payload.offset), expected \(expected): payloads must be packed"))
                        break
                    }
                    expected += e.payload.paddedLength
                }
                if problems.isEmpty && expected != footerOffset {
                    problems.append(
                        .offsetOutOfRange(
                            file: path, section: "trailer",
                            detail: "the footer starts at \(footerOffset) but the payloads end at \(expected): no gap is allowed"))
                }
            }
        }
        var next = 0
        for t in footer.tickers {
            guard t.rowCount <= rows else {  // also keeps the sum below from overflowing
                problems.append(
                    .malformedFooter(file: path, section: "TIDX", detail: "ticker \(t.symbol) has \(t.rowCount) rows of \(rows)"))
                return problems
            }
            if t.firstRow != next {
                problems.append(
                    .malformedFooter(
                        file: path, section: "TIDX", detail: "ticker \(t.symbol) starts at row \(t.firstRow), expected \(next)"))
                next = t.firstRow
            }
            next += t.rowCount
        }
        if next != rows {
            problems.append(.malformedFooter(file: path, section: "TIDX", detail: "the ticker index covers \(next) rows of \(rows)"))
        }
        return problems
    }

    /// Hashes every payload (on up to `threads` threads) and returns the mismatches; with `checkSummaries`,
    /// also checks each value payload's block summaries against its data, fused with the hashing
    /// (a piece of the payload is hashed, then its blocks are checked while they are in cache).
    ///
    /// The summary check is what queries need to answer right: every known value (not null, not
    /// NaN) of a block lies within the block's stored minimum and maximum, and the block's count
    /// of nulls and NaNs is exact. (`verifySnapshot` compares summaries bit for bit instead.)
    /// - Precondition: `layoutProblems()` is empty.
    func checksumProblems(
        checkSummaries: Bool = false, threads: Int = QueryOptions.availableCores,
        progress: (@Sendable (Int) -> Void)? = nil
    ) -> [SnapshotError] {
        let list = payloads
        let rows = footer.rowCount
        // For each payload: the column whose values it is (nil for validity), for the summary check.
        var valuesOf = [Int?]()
        for (i, c) in footer.columns.enumerated() {
            valuesOf.append(i)
            if c.validity != nil { valuesOf.append(nil) }
        }
        var results = [UInt64](repeating: 0, count: list.count)
        var badBlocks = [Int](repeating: -1, count: list.count)
        let base = mapping.base
        results.withUnsafeMutableBufferPointer { out in
            badBlocks.withUnsafeMutableBufferPointer { bad in
                let shared = SharedPointer(base: out.baseAddress!)
                let sharedBad = SharedPointer(base: bad.baseAddress!)
                let sendableBase = UncheckedSendableBox(base)
                forEachChunk(list.count, threads: Swift.max(1, threads)) { i, _ in
                    let p = list[i].payload
                    // Safe: layoutProblems() checked that the padded payload lies inside the mapping.
                    let bytes = UnsafeRawBufferPointer(start: sendableBase.value + p.offset, count: p.paddedLength)
                    defer { progress?(p.paddedLength) }
                    guard checkSummaries, let c = valuesOf[i], let summaries = footer.summaries?[c] else {
                        shared.base[i] = SnapshotChecksum.hash(bytes, seed: UInt64(p.offset))
                        return
                    }
                    let validity = footer.columns[c].validity.map { v in
                        // Safe: as above, for the validity payload (ceil(rows / 64) words).
                        UnsafePointer<UInt64>(OpaquePointer(sendableBase.value + v.offset))
                    }
                    let (sum, block) = Self.hashCheckingSummaries(
                        bytes, seed: UInt64(p.offset), rows: rows,
                        summaries: summaries, validity: validity)
                    shared.base[i] = sum
                    sharedBad.base[i] = block ?? -1
                }
            }
        }
        var problems = [SnapshotError]()
        for (i, (name, p)) in list.enumerated() where results[i] != p.checksum {
            problems.append(.checksumMismatch(file: path, section: "payload", column: name, expected: p.checksum, actual: results[i]))
        }
        for (i, (name, _)) in list.enumerated() where badBlocks[i] >= 0 {
            let first = badBlocks[i] * BlockSummaries<Int32>.blockRows
            problems.append(
                .inconsistentData(
                    file: path, section: "SUMM",
                    detail: "block summary \(badBlocks[i]) of \(name) (rows from \(first)) does not match the data"))
        }
        return problems
    }

    /// The checksum of a value payload, and the first block whose summary does not hold for its
    /// values (nil when every one does).
    private static func hashCheckingSummaries(
        _ bytes: UnsafeRawBufferPointer, seed: UInt64, rows: Int,
        summaries: AnyBlockSummaries, validity: UnsafePointer<UInt64>?
    ) -> (UInt64, Int?) {
        switch summaries {
        case .int32(let s): hashCheckingSummaries(bytes, seed: seed, rows: rows, s, validity)
        case .int64(let s): hashCheckingSummaries(bytes, seed: seed, rows: rows, s, validity)
        case .float32(let s): hashCheckingSummaries(bytes, seed: seed, rows: rows, s, validity)
        case .float64(let s): hashCheckingSummaries(bytes, seed: seed, rows: rows, s, validity)
        }
    }

    private static func hashCheckingSummaries<T: ColumnElement>(
        _ bytes: UnsafeRawBufferPointer, seed: UInt64, rows: Int,
        _ summaries: BlockSummaries<T>,
        _ validity: UnsafePointer<UInt64>?
    ) -> (UInt64, Int?) {
        let blockRows = BlockSummaries<T>.blockRows
        let piecesBlocks = 32  // 32 blocks of 512 rows: 64–128 KiB, hashed then checked in L2
        let pieceBytes = piecesBlocks * blockRows * MemoryLayout<T>.stride
        var hasher = SnapshotChecksum(seed: seed)
        var firstBad: Int?
        var scratch = [UInt64](repeating: 0, count: 2 * blockRows / 64)
        var done = 0, block = 0
        // Safe: bytes covers the padded payload, whose length is a multiple of 64; it holds `rows`
        // values of T (checked by layoutProblems()), and the mapping's base is page-aligned.
        let values = bytes.baseAddress.map { UnsafePointer<T>(OpaquePointer($0)) }
        while done < bytes.count {
            let n = min(pieceBytes, bytes.count - done)
            hasher.combine(stripes: bytes.baseAddress! + done, stripeCount: n / 64)
            done += n
            let end = min(rows, done / MemoryLayout<T>.stride)
            while firstBad == nil, block < summaries.count, (block + 1) * blockRows <= end || end == rows {
                let lo = block * blockRows, count = min(blockRows, rows - lo)
                if !scratch.withUnsafeMutableBufferPointer({
                    summaryHolds(summaries, block: block, values!, lo, count, validity, $0.baseAddress!)
                }) {
                    firstBad = block
                }
                block += 1
            }
        }
        return (hasher.value, firstBad)
    }

    /// Whether block `block` (rows `lo ..< lo + count`) agrees with its summary: every known value
    /// within [minimum, maximum], and exactly the stored number of nulls and NaNs.
    @inline(__always)
    private static func summaryHolds<T: ColumnElement>(
        _ s: BlockSummaries<T>, block: Int, _ values: UnsafePointer<T>, _ lo: Int, _ count: Int,
        _ validity: UnsafePointer<UInt64>?, _ scratch: UnsafeMutablePointer<UInt64>
    ) -> Bool {
        let words = (count + 63) >> 6
        let inRange = scratch, known = scratch + words
        RangeKernels._evaluate(.closed(s.minimums[block], s.maximums[block]), values + lo, count: count, inRange, .store)
        RangeKernels._evaluate(.any, values + lo, count: count, known, .store)  // not NaN
        var knownCount = 0, outside: UInt64 = 0
        for w in 0 ..< words {
            var k = known[w]
            if let validity { k &= validity[(lo >> 6) + w] }
            if w == words - 1 && count & 63 != 0 { k &= (UInt64(1) << UInt64(count & 63)) &- 1 }
            knownCount += k.nonzeroBitCount
            outside |= k & ~inRange[w]
        }
        return outside == 0 && count - knownCount == Int(s.unknownCounts[block])
    }

    /// Builds the table of views. Checks validity padding bits (cheap) and, with `checkDates`,
    /// that dates ascend strictly within each ticker.
    /// - Precondition: `layoutProblems()` is empty, and the whole footer was read.
    func makeTable(checkDates: Bool, checkValidityPadding: Bool = true) throws(SnapshotError) -> QuoteTable {
        precondition(footer.extent == .whole, "a table needs the whole footer (summaries, metadata)")
        var columns = [AnyColumn]()
        for (i, entry) in footer.columns.enumerated() {
            let summaries = footer.summaries?[i]
            columns.append(try column(entry, name: footer.columnName(i), summaries: summaries, checkPadding: checkValidityPadding))
        }
        guard case .int32(let dates) = columns.removeFirst() else {
            throw .malformedFooter(file: path, section: "COLS", detail: "the date column is not int32")
        }
        if let problem = nullDateProblem(dates) { throw problem.error }
        if checkDates, let problem = dateProblems(dates, limit: 1).first { throw problem.error }
        // Every row when verifying; else each ticker's first and last rows, which bound the rest
        // in a file whose dates ascend (every writer's; `verify` checks every row).
        if let problem = dateRangeProblems(dates, everyRow: checkDates, limit: 1).first { throw problem.error }
        do {
            return try QuoteTable(
                schema: footer.schema, columns: columns, dates: dates, tickers: footer.tickers,
                numberBySymbol: footer.decodedTickers?.numbers,
                dateColumnName: footer.dateColumnName, metadata: footer.metadata, checkDates: false)
        } catch {
            throw .malformedFooter(file: path, section: "TIDX", detail: error.description)
        }
    }

    /// A file's dates as an append reads them: each ticker's first and last dates, and the
    /// date column for lookups within a ticker's run.
    struct TickerDates {
        /// The date column (a view into the mapping).
        let column: Column<Int32>
        /// Per ticker, its first and its last date (0 for a ticker without rows).
        let first: [Int32], last: [Int32]
    }

    /// The checks `load(verify: false)` makes, without building a table, for a reader of the
    /// footer's index (`SnapshotFooter.Extent.index`): payload placement and the ticker index
    /// tiling the rows (`layoutProblems()`), validity padding bits, no null date, and each
    /// ticker's first and last dates storable.
    ///
    /// Where tickers hold many rows each (more than 4,096 on average, 16 KiB of dates), each
    /// ticker's first and last dates are read with `pread`, not through the mapping: a touch
    /// there maps a window of pages around it (fault-around) that unmapping tears down again,
    /// ~5.5 ms for the 2,000 tickers of a 20 M-row file against ~1.3 ms for the reads (a
    /// ticker's last row and the next one's first are read together). Where they hold few (a
    /// day's segment: one each), the dates lie in a few pages, read through the mapping.
    func checkedDates() throws(SnapshotError) -> TickerDates {
        do throws(SnapshotError) {
            if let problem = layoutProblems().first { throw problem }
            for (i, entry) in footer.columns.enumerated() {
                if let problem = validityPaddingProblem(entry, name: footer.columnName(i)) { throw problem }
            }
            let column = try dateColumn()
            if let problem = nullDateProblem(column) { throw problem.error }
            let nonEmpty = footer.tickers.count(where: { $0.rowCount > 0 })
            let (first, last) =
                footer.rowCount > 4_096 * nonEmpty ? try readTickerDates() : mappedTickerDates(column)
            for (i, t) in footer.tickers.enumerated() where t.rowCount > 0 {
                // As `dateRangeProblems(everyRow: false)`: the first, then the last row.
                for (row, day) in [(t.firstRow, first[i]), (t.firstRow + t.rowCount - 1, last[i])]
                where !Day.storableDayNumbers.contains(day) {
                    let problem = TableError.dateOutOfRange(ticker: t.symbol, row: row, day: day)
                    throw .inconsistentData(file: path, section: "payload", detail: problem.description)
                }
            }
            if mapping.lostPages { throw shrank }
            return TickerDates(column: column, first: first, last: last)
        } catch {
            // As in `load`: what went wrong came from the zeros a file cut meanwhile reads as.
            if mapping.lostPages { throw shrank }
            throw error
        }
    }

    /// Each ticker's first and last dates, from the mapped date column.
    /// - Precondition: `layoutProblems()` is empty.
    private func mappedTickerDates(_ column: Column<Int32>) -> ([Int32], [Int32]) {
        column.withUnsafeBufferPointer { dates in
            // Safe: the tickers tile the rows (precondition).
            let first = footer.tickers.map { $0.rowCount > 0 ? dates[$0.firstRow] : 0 }
            let last = footer.tickers.map { $0.rowCount > 0 ? dates[$0.firstRow + $0.rowCount - 1] : 0 }
            return (first, last)
        }
    }

    /// Each ticker's first and last dates, read from the file with `pread`.
    /// - Precondition: `layoutProblems()` is empty (the tickers tile the rows; the date payload
    ///   lies within the file).
    private func readTickerDates() throws(SnapshotError) -> ([Int32], [Int32]) {
        let fd = try SnapshotFile.open(path, O_RDONLY | O_NONBLOCK, file: path, operation: "open")
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw SnapshotError.system(path, "fstat", errno) }
        guard UInt64(st.st_dev) == fileIdentity.device, UInt64(st.st_ino) == fileIdentity.inode else {
            throw .inconsistentData(file: path, section: "payload", detail: "the file was replaced while it was read")
        }
        let tickers = footer.tickers, rows = footer.rowCount, base = footer.columns[0].values.offset
        var first = [Int32](repeating: 0, count: tickers.count), last = first
        var pair: (Int32, Int32) = (0, 0)
        // The date of `row` and, when there is one, of the row after it.
        func read(_ row: Int) throws(SnapshotError) -> (Int32, Int32) {
            let count = row + 1 < rows ? 8 : 4
            let got = withUnsafeMutableBytes(of: &pair) { SystemCall.readFully(fd, $0.baseAddress!, count, at: base + 4 * row) }
            if got < 0 { throw SnapshotError.system(path, "read", Int32(-got)) }
            if got < count { throw shrank }
            return (Int32(littleEndian: pair.0), Int32(littleEndian: pair.1))
        }
        var next: Int32?  // the date of the row after the previous ticker's last
        for (i, t) in tickers.enumerated() where t.rowCount > 0 {
            // The tickers tile the rows: this one starts right after the previous one's last row.
            if let next { first[i] = next } else { first[i] = try read(t.firstRow).0 }
            let (end, after) = try read(t.firstRow + t.rowCount - 1)
            last[i] = end
            next = t.firstRow + t.rowCount < rows ? after : nil
        }
        return (first, last)
    }

    /// Bits set past the row count in the last word of `entry`'s validity bitmap, if it has one.
    /// - Precondition: `layoutProblems()` is empty.
    private func validityPaddingProblem(_ entry: SnapshotColumnEntry, name: String) -> SnapshotError? {
        let rows = footer.rowCount
        guard let v = entry.validity, rows & 63 != 0 else { return nil }
        let last = Bitmask(viewing: storage(v), count: rows).withUnsafeWords { $0[$0.count - 1] }
        guard last >> UInt64(rows & 63) != 0 else { return nil }
        return .inconsistentData(file: path, section: "payload", detail: "\(name).validity has bits set past row \(rows)")
    }

    private func storage(_ p: SnapshotPayload) -> ColumnStorage {
        // Safe: layoutProblems() checked the extent; the base is page-aligned and the offset a multiple of 64.
        ColumnStorage(borrowing: mapping.base + p.offset, byteCount: p.paddedLength, owner: mapping)
    }

    private func column(
        _ entry: SnapshotColumnEntry, name: String, summaries: AnyBlockSummaries?, checkPadding: Bool
    ) throws(SnapshotError) -> AnyColumn {
        let rows = footer.rowCount
        var validity: Bitmask?
        if let v = entry.validity {
            if checkPadding, let problem = validityPaddingProblem(entry, name: name) { throw problem }
            validity = Bitmask(viewing: storage(v), count: rows)
        }
        let values = storage(entry.values)
        switch (entry.type, summaries) {
        case (.int32, .int32(let s)?): return .int32(Column(viewing: values, count: rows, validity: validity, summaries: s))
        case (.int64, .int64(let s)?): return .int64(Column(viewing: values, count: rows, validity: validity, summaries: s))
        case (.float32, .float32(let s)?): return .float32(Column(viewing: values, count: rows, validity: validity, summaries: s))
        case (.float64, .float64(let s)?): return .float64(Column(viewing: values, count: rows, validity: validity, summaries: s))
        case (.int32, _): return .int32(Column(viewing: values, count: rows, validity: validity, summaries: nil))
        case (.int64, _): return .int64(Column(viewing: values, count: rows, validity: validity, summaries: nil))
        case (.float32, _): return .float32(Column(viewing: values, count: rows, validity: validity, summaries: nil))
        case (.float64, _): return .float64(Column(viewing: values, count: rows, validity: validity, summaries: nil))
        }
    }

    /// Rows where dates do not ascend strictly within a ticker, at most `limit` per ticker.
    func dateProblems(_ dates: Column<Int32>, limit: Int) -> [SnapshotProblem] {
        var out = [SnapshotProblem]()
        dates.withUnsafeBufferPointer { d in
            for t in footer.tickers where t.rowCount > 1 {
                var found = 0
                for r in t.firstRow + 1 ..< t.firstRow + t.rowCount where d[r] <= d[r - 1] {
                    found += 1
                    if found > limit { continue }
                    let what = d[r] == d[r - 1] ? "repeats" : "is before"
                    let detail =
                        "date \(Day.format(day: d[r])) of ticker \(t.symbol) at row \(r) \(what) the previous row's \(Day.format(day: d[r - 1]))"
                    out.append(
                        SnapshotProblem(
                            section: "payload", column: "date", ticker: t.symbol, row: r,
                            error: .inconsistentData(file: path, section: "payload", detail: detail)))
                }
                if found > limit && limit > 1 {
                    out.append(
                        SnapshotProblem(
                            section: "payload", column: "date", ticker: t.symbol, row: nil,
                            error: .inconsistentData(
                                file: path, section: "payload",
                                detail: "\(found - limit) more date order problems in ticker \(t.symbol)")))
                }
                if limit == 1 && !out.isEmpty { return }
            }
        }
        return out
    }

    /// Rows whose dates are outside the storable range (`Day.storableDayNumbers`; see
    /// SNAPSHOT_FORMAT.md, *Dates*): the first of each ticker, at most `limit` tickers. Every row
    /// with `everyRow`, else each ticker's first and last.
    func dateRangeProblems(_ dates: Column<Int32>, everyRow: Bool, limit: Int) -> [SnapshotProblem] {
        var out = [SnapshotProblem]()
        var tickers = footer.tickers
        while out.count < limit, let problem = QuoteTable.dateRangeProblem(dates, tickers, everyRow: everyRow),
            case let .dateOutOfRange(symbol, row, _) = problem
        {
            out.append(
                SnapshotProblem(
                    section: "payload", column: "date", ticker: symbol, row: row,
                    error: .inconsistentData(file: path, section: "payload", detail: problem.description)))
            // The next ticker after this one.
            tickers.removeAll { $0.firstRow <= row }
        }
        return out
    }

    /// The first row without a date, when the date column has a validity bitmap with a zero bit:
    /// every row has a date, so a date bitmap, if present, must have every bit set
    /// (SNAPSHOT_FORMAT.md, Column payloads). Without it, a null date would read as 1970-01-01.
    /// - Complexity: O(n / 64) when the column has a bitmap (Colonnade never writes one), else O(1).
    func nullDateProblem(_ dates: Column<Int32>) -> SnapshotProblem? {
        guard let row = dates.validity?.firstClearRow else { return nil }
        let ticker = footer.tickers.last { $0.firstRow <= row }?.symbol
        return SnapshotProblem(
            section: "payload", column: "date.validity", ticker: ticker, row: row,
            error: .inconsistentData(
                file: path, section: "payload",
                detail: "row \(row) has no date (date.validity bit 0); every row needs a date, so a date bitmap must have every bit set"))
    }

    /// The date column, for checks that run before the table is built.
    /// - Precondition: `layoutProblems()` is empty.
    func dateColumn() throws(SnapshotError) -> Column<Int32> {
        guard case .int32(let dates) = try column(footer.columns[0], name: footer.columnName(0), summaries: nil, checkPadding: false) else {
            throw .malformedFooter(file: path, section: "COLS", detail: "the date column is not int32")
        }
        return dates
    }

    var info: SnapshotInfo {
        SnapshotInfo(
            path: path, majorVersion: majorVersion, minorVersion: minorVersion, fileSize: mapping.size,
            rowCount: footer.rowCount, tickerCount: footer.tickers.count, schema: footer.schema,
            dateColumnName: footer.dateColumnName, metadata: footer.metadata,
            payloadBytes: footerOffset - SnapshotFormat.payloadStart, footerBytes: footerLength,
            hasBlockSummaries: footer.summaries?.allSatisfy { $0 != nil } ?? false,
            nullableColumns: footer.columns.indices.dropFirst().filter { footer.columns[$0].validity != nil }.map { footer.columnName($0) })
    }
}
