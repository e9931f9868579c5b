#if canImport(Glibc)
import Glibc
#endif

extension QuoteTable {
    /// Saves the table as a snapshot file (format: `docs/SNAPSHOT_FORMAT.md`), atomically.
    ///
    ///     try table.save(to: "snapshots/wiki.snapshot")
    ///     let again = try QuoteTable.load(from: "snapshots/wiki.snapshot")
    ///
    /// The table is written to a new temporary file beside the target (a `ReplacementFile`:
    /// `.NAME.tmp-PID-RANDOM`, locked with `flock` while written), with large `write(2)` calls
    /// straight from the column buffers; the file is `fsync`ed, renamed over the target, and the
    /// directory is `fsync`ed. The target is never rewritten in place, so a process killed at any
    /// instant leaves the old snapshot or the new one, and processes that have the old one mapped
    /// keep reading it. Temporaries left by killed savers are removed by the next save to the same
    /// path (only those no live saver holds locked).
    ///
    /// The new file keeps the replaced one's permission bits, and its owner and group where the
    /// process may set them. A symbolic link is written through: its target is replaced and the
    /// link stays (`FileTarget`). Block summaries are written from the columns, computed here for
    /// columns without them.
    ///
    /// `save` alone does not lock out other writers: two processes that each load, change and save
    /// one path can lose one's change. Use `update(at:wait:verify:durable:whileWaiting:_:)` for a
    /// read-modify-write.
    ///
    /// - Parameters:
    ///   - path: the snapshot file to create or replace.
    ///   - durable: `false` skips both `fsync` calls (for benchmarks and scratch files): the rename
    ///     is still atomic for other processes, but a power loss may lose the new file.
    /// - Throws: `SnapshotError` naming `path`: `noSuchFile` (no such directory), `isADirectory`,
    ///   `notARegularFile` (a FIFO, a device), `danglingSymlink`, `readOnly` (we may not write the
    ///   file; as root, when it has no write bit at all), `permissionDenied` (the directory), `ioError` (for
    ///   example ENOSPC). The target is untouched then.
    /// - Complexity: one pass over the table's bytes (hashed while written).
    public func save(to path: String, durable: Bool = true) throws(SnapshotError) {
        try SnapshotWriter(table: self, path: path).save(durable: durable)
    }

    /// `save(to:durable:)` on at most `threads` threads (1: the calling thread only; the bytes
    /// do not depend on it).
    public func save(to path: String, durable: Bool = true, threads: Int) throws(SnapshotError) {
        var writer = SnapshotWriter(table: self, path: path)
        writer.threads = Swift.max(1, threads)
        try writer.save(durable: durable)
    }

    /// `save(to:durable:)`, calling `progress` with the bytes of each payload once it is written
    /// (from the writing thread), for a progress display.
    public func save(to path: String, durable: Bool = true, progress: @escaping @Sendable (Int) -> Void) throws(SnapshotError) {
        var writer = SnapshotWriter(table: self, path: path)
        writer.progress = progress
        try writer.save(durable: durable)
    }
}

/// Lays out and writes one snapshot file.
struct SnapshotWriter {
    let table: QuoteTable
    let path: String
    /// With 2 or more, one thread writes the payloads while another computes their checksums
    /// (`writePayloads`); the bytes do not depend on it.
    var threads = QueryOptions.availableCores
    /// Whether each written piece's writeback to disk starts at once (durable saves): the disk
    /// then works while later pieces are copied, instead of all at the final `fsync`.
    var startsWriteback = true
    /// Called with each payload's length once it is written.
    var progress: (@Sendable (Int) -> Void)?

    /// One payload to write: where its bytes are in memory and where they go in the file.
    struct Source {
        var base: UnsafeRawPointer
        var length: Int
        var offset: Int
        // Keeps the memory alive while writing.
        var storage: ColumnStorage
    }

    func save(durable: Bool) throws(SnapshotError) {
        var writer = self
        writer.startsWriteback = startsWriteback && durable
        try writer.write(durable: durable)
    }

    private func write(durable: Bool) throws(SnapshotError) {
        // Never write a file this reader would refuse: the same schema rules as the loader.
        if let problem = Self.schemaProblem(table) { throw .unsavable(file: path, reason: problem) }
        let file: ReplacementFile
        do { file = try ReplacementFile(replacing: path) } catch { throw SnapshotError(error, file: path) }
        do throws(SnapshotError) {
            try writeFile(file.fileDescriptor, layout())
        } catch {
            file.discard()
            throw error
        }
        do { try file.commit(durable: durable) } catch { throw SnapshotError(error, file: path) }
    }

    /// Where each part of the file goes: the payloads (with where their bytes are in memory), the
    /// footer (checksums still 0) and the file's length.
    struct Layout {
        var sources: [Source]
        var footer: SnapshotFooter
        var footerOffset: Int
        var fileLength: Int
    }

    /// Hands out payload offsets in file order: from 4096, each payload at the next multiple of 64
    /// after the one before. The one place that decides where payloads go (`layout()` and
    /// `plannedOffsets` both use it).
    struct PayloadPlacer {
        private(set) var offset = SnapshotFormat.payloadStart
        mutating func place(length: Int) -> SnapshotPayload {
            let p = SnapshotPayload(offset: offset, length: length, checksum: 0)
            offset += p.paddedLength
            return p
        }
    }

    /// The file offsets of the date payload and of each value column's values for a table of
    /// `rowCount` rows whose value columns have the byte widths `valueWidths`, and where they end
    /// (the footer's offset for a table without validity bitmaps; its bitmaps' start otherwise):
    /// what `layout()` gives such a table, nulls or not. `SnapshotDraft` places rows there before
    /// the table exists; its commit checks the table's real layout.
    static func plannedOffsets(rowCount: Int, valueWidths: [Int]) -> (payloads: [Int], footerOffset: Int) {
        var placer = PayloadPlacer()
        let payloads = ([4] + valueWidths).map { placer.place(length: rowCount * $0).offset }
        return (payloads, placer.offset)
    }

    /// The table's layout: payloads from 4096, the dates' values first, then each value column's
    /// values, then the validity bitmaps of the columns that have one, in column order; the footer
    /// after them. `sources` lists the payloads in that (file) order.
    ///
    /// Values before every bitmap, so that where the values go depends only on the row count
    /// and the columns' widths, not on which columns hold nulls: a fresh import places its rows
    /// before it knows (`SnapshotDraft`). Readers take the offsets from the footer.
    func layout() -> Layout {
        var sources = [Source]()
        var placer = PayloadPlacer()
        func place(_ storage: ColumnStorage, _ length: Int) -> SnapshotPayload {
            let p = placer.place(length: length)
            sources.append(Source(base: UnsafeRawPointer(storage.base), length: length, offset: p.offset, storage: storage))
            return p
        }
        let all = [AnyColumn.int32(table.dates)] + table.columns
        let values = all.map { column in
            let (storage, width) = Self.valueStorage(column)
            return place(storage, column.count * width)
        }
        let entries = zip(all, values).map { column, values in
            SnapshotColumnEntry(
                type: column.elementType, values: values,
                validity: column.validity.map { place($0.wordStorage, $0.wordCount * 8) })
        }
        let footerOffset = placer.offset
        let footer = SnapshotFooter(
            dateColumnName: table.dateColumnName, schema: table.schema, tickers: table.tickers,
            rowCount: table.rowCount, columns: entries, summaries: all.map { AnyBlockSummaries($0) },
            metadata: table.metadata)
        let footerLength = footer.encoded().count  // checksums do not change the length
        return Layout(
            sources: sources, footer: footer, footerOffset: footerOffset,
            fileLength: footerOffset + footerLength + SnapshotFormat.trailerSize)
    }

    /// Writes the whole file at `fd` by `layout`: reserves its length, the header page, the
    /// payloads (the first `inPlace` of them only checksummed: their bytes are already in the
    /// file at their offsets, `SnapshotDraft`), the footer with the checksums, the trailer.
    func writeFile(_ fd: Int32, _ layout: Layout, inPlace: Int = 0) throws(SnapshotError) {
        precondition(inPlace >= 0 && inPlace <= layout.sources.count, "more payloads in place than the layout has")
        try SnapshotFile.reserve(fd, length: layout.fileLength, file: path)
        try SnapshotFile.writeAll(fd, Self.header(fileLength: layout.fileLength, footerOffset: layout.footerOffset), at: 0, file: path)
        let checksums =
            Self.checksums(Array(layout.sources.prefix(inPlace)), threads: threads)
            + (try Self.writePayloads(
                fd, Array(layout.sources.dropFirst(inPlace)), threads: threads,
                startsWriteback: startsWriteback, file: path, progress: progress))
        // In `layout()`'s order: every column's values, then the bitmaps.
        var footer = layout.footer
        var k = 0
        for i in footer.columns.indices {
            footer.columns[i].values.checksum = checksums[k]
            k += 1
        }
        for i in footer.columns.indices where footer.columns[i].validity != nil {
            footer.columns[i].validity!.checksum = checksums[k]
            k += 1
        }
        let footerBytes = footer.encoded()
        var trailer = SnapshotByteWriter()
        trailer.writeUInt64LE(SnapshotChecksum.hash(footerBytes, seed: UInt64(layout.footerOffset)))
        trailer.writeUInt64LE(UInt64(footerBytes.count))
        trailer.bytes.append(contentsOf: SnapshotFormat.magic)
        try SnapshotFile.writeAll(fd, footerBytes + trailer.bytes, at: layout.footerOffset, file: path)
    }

    /// The checksums of `sources`, in order, one payload per worker on up to `threads` threads.
    static func checksums(_ sources: [Source], threads: Int) -> [UInt64] {
        var checksums = [UInt64](repeating: 0, count: sources.count)
        checksums.withUnsafeMutableBufferPointer { out in
            let slots = SharedPointer(base: out.baseAddress!)
            // Safe: each index is claimed by one worker only.
            forEachChunk(sources.count, threads: Swift.max(1, threads)) { i, _ in slots.base[i] = checksum(of: sources[i]) }
        }
        return checksums
    }

    /// Why the reader would refuse `table`'s schema (too many columns, an unusable identifier).
    static func schemaProblem(_ table: QuoteTable) -> String? {
        if table.schema.count > QuoteTable.maximumColumnCount {
            return "\(table.schema.count) value columns; a table holds at most \(QuoteTable.maximumColumnCount)"
        }
        let dateIdentifier = ColumnDescriptor.identifier(for: table.dateColumnName)
        for d in table.schema {
            if let reason = ColumnDescriptor.unusableIdentifierReason(d.identifier, dateColumnIdentifier: dateIdentifier) {
                return "column \(d.name): \(reason)"
            }
        }
        return nil
    }

    static func valueStorage(_ column: AnyColumn) -> (ColumnStorage, Int) {
        switch column {
        case .int32(let c): (c.valueStorage, 4)
        case .int64(let c): (c.valueStorage, 8)
        case .float32(let c): (c.valueStorage, 4)
        case .float64(let c): (c.valueStorage, 8)
        }
    }

    /// The header page: 64 bytes of header, zeros to 4096.
    static func header(fileLength: Int, footerOffset: Int) -> [UInt8] {
        var w = SnapshotByteWriter()
        w.bytes.reserveCapacity(SnapshotFormat.payloadStart)
        w.bytes.append(contentsOf: SnapshotFormat.magic)
        w.writeUInt16LE(SnapshotFormat.majorVersion)
        w.writeUInt16LE(SnapshotFormat.minorVersion)
        w.writeUInt32LE(0)  // flags
        w.writeUInt64LE(UInt64(fileLength))
        w.writeUInt64LE(UInt64(SnapshotFormat.payloadStart))
        w.writeUInt64LE(UInt64(footerOffset))
        w.bytes.append(contentsOf: repeatElement(0, count: SnapshotFormat.payloadStart - w.bytes.count))
        w.setUInt64LE(SnapshotChecksum.hash(w.bytes, seed: 0), at: SnapshotFormat.headerChecksumOffset)
        return w.bytes
    }

    /// Writes every payload at its offset and returns their checksums in order.
    ///
    /// One thread writes, in file order: buffered writes into one file serialize on its inode
    /// lock, so parallel writers only spun on it (9 % of a medium import's CPU in
    /// `rwsem_spin_on_owner`) without copying any faster. With `threads` ≥ 2 a second thread
    /// computes the checksums meanwhile; with one, each chunk is hashed just before it is written.
    /// - Throws: The first failing write's error (in file order).
    static func writePayloads(
        _ fd: Int32, _ sources: [Source], threads: Int, startsWriteback: Bool = false,
        file: String, progress: (@Sendable (Int) -> Void)? = nil
    ) throws(SnapshotError) -> [UInt64] {
        if threads <= 1 || sources.count < 2 {
            var checksums: [UInt64] = []
            checksums.reserveCapacity(sources.count)
            for s in sources {
                checksums.append(try writePayload(fd, s, startsWriteback: startsWriteback, file: file))
                progress?(s.length)
            }
            return checksums
        }
        var checksums = [UInt64](repeating: 0, count: sources.count)
        var failure: SnapshotError?
        checksums.withUnsafeMutableBufferPointer { out in
            let slots = SharedPointer(base: out.baseAddress!)
            forEachChunk(2, threads: 2) { role, _ in
                if role == 0 {
                    // Safe: only this role touches `failure` until both roles have returned.
                    do throws(SnapshotError) {
                        for s in sources {
                            try writeBytes(fd, s, startsWriteback: startsWriteback, file: file)
                            progress?(s.length)
                        }
                    } catch {
                        failure = error
                    }
                } else {
                    // Safe: only this role writes the checksum slots.
                    for (i, s) in sources.enumerated() { slots.base[i] = checksum(of: s) }
                }
            }
        }
        if let failure { throw failure }
        return checksums
    }

    /// The checksum of one payload: its bytes, zero-padded to the payload alignment.
    static func checksum(of s: Source) -> UInt64 {
        var hasher = SnapshotChecksum(seed: UInt64(s.offset))
        let body = s.length & ~(SnapshotFormat.payloadAlignment - 1)
        hasher.combine(stripes: s.base, stripeCount: body / SnapshotChecksum.stripeBytes)
        withPaddedTail(s, body: body) { hasher.combineFinal($0) }
        withExtendedLifetime(s.storage) {}
        return hasher.value
    }

    /// Writes one payload and its zero padding at its offset in chunks of 4 MiB, with
    /// `startsWriteback` starting each chunk's writeback to disk right after it.
    static func writeBytes(_ fd: Int32, _ s: Source, startsWriteback: Bool, file: String) throws(SnapshotError) {
        let body = s.length & ~(SnapshotFormat.payloadAlignment - 1)
        let chunk = 4 << 20
        var done = 0
        while done < body {
            let n = min(chunk, body - done)
            try SnapshotFile.writeAll(fd, s.base + done, n, at: s.offset + done, file: file)
            if startsWriteback { SnapshotFile.startWriteback(fd, offset: s.offset + done, count: n) }
            done += n
        }
        let tailError: SnapshotError? = withPaddedTail(s, body: body) { t in
            do throws(SnapshotError) { try SnapshotFile.writeAll(fd, t.baseAddress, t.count, at: s.offset + body, file: file) } catch {
                return error
            }
            return nil
        }
        if let tailError { throw tailError }
        withExtendedLifetime(s.storage) {}
    }

    /// Calls `body` with the payload's bytes past `body` (its last, partial alignment unit)
    /// zero-extended to the alignment, or with no bytes when there are none.
    static func withPaddedTail<R>(_ s: Source, body: Int, _ work: (UnsafeRawBufferPointer) -> R) -> R {
        var tail = [UInt8](repeating: 0, count: s.length > body ? SnapshotFormat.payloadAlignment : 0)
        if !tail.isEmpty {
            // Safe: the tail holds payloadAlignment bytes and s.length - body is less.
            tail.withUnsafeMutableBytes { $0.baseAddress!.copyMemory(from: s.base + body, byteCount: s.length - body) }
        }
        return tail.withUnsafeBytes { work($0) }
    }

    /// Writes one payload and its zero padding at its offset, hashing each chunk just before
    /// writing it (while it is in cache), and with `startsWriteback` starting its writeback to
    /// disk right after. Returns the checksum.
    static func writePayload(_ fd: Int32, _ s: Source, startsWriteback: Bool = false, file: String) throws(SnapshotError) -> UInt64 {
        var hasher = SnapshotChecksum(seed: UInt64(s.offset))
        let body = s.length & ~(SnapshotFormat.payloadAlignment - 1)
        let chunk = 4 << 20
        var done = 0
        while done < body {
            let n = min(chunk, body - done)
            hasher.combine(stripes: s.base + done, stripeCount: n / SnapshotChecksum.stripeBytes)
            try SnapshotFile.writeAll(fd, s.base + done, n, at: s.offset + done, file: file)
            if startsWriteback { SnapshotFile.startWriteback(fd, offset: s.offset + done, count: n) }
            done += n
        }
        var tail = [UInt8](repeating: 0, count: s.length > body ? SnapshotFormat.payloadAlignment : 0)
        if !tail.isEmpty {
            tail.withUnsafeMutableBytes { $0.baseAddress!.copyMemory(from: s.base + body, byteCount: s.length - body) }
        }
        tail.withUnsafeBytes { hasher.combineFinal($0) }
        let tailError: SnapshotError? = tail.withUnsafeBytes { t in
            do throws(SnapshotError) { try SnapshotFile.writeAll(fd, t.baseAddress, t.count, at: s.offset + body, file: file) } catch {
                return error
            }
            return nil
        }
        if let tailError { throw tailError }
        withExtendedLifetime(s.storage) {}
        return hasher.value
    }
}
