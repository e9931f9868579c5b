#if canImport(Glibc)
import Glibc
#endif

extension QuoteTable {
    /// Saves the table as a snapshot file (format: `docs/SNAPSHOT_FORMAT.md`), atomically.
    ///
    ///     try table.save(to: "snapshots/wiki.snapshot")
    ///     let again = try QuoteTable.load(from: "snapshots/wiki.snapshot")
    ///
    /// The table is written to a new temporary file beside the target (`.NAME.tmp-PID-RANDOM`), with
    /// large `write(2)` calls straight from the column buffers; the file is `fsync`ed, renamed over
    /// the target, and the directory is `fsync`ed. The target is never rewritten in place, so a
    /// process killed at any instant leaves the old snapshot or the new one, and processes that have
    /// the old one mapped keep reading it. Two processes saving to one path at once each write their
    /// own temporary; the last rename wins and both files are whole. Temporaries left by killed
    /// savers (whose process no longer exists) are removed by the next save to the same path.
    /// Block summaries are written from the columns, computed here for columns without them.
    ///
    /// - Parameters:
    ///   - path: the snapshot file to create or replace.
    ///   - durable: `false` skips both `fsync` calls (for benchmarks and scratch files): the rename
    ///     is still atomic for other processes, but a power loss may lose the new file.
    /// - Throws: `SnapshotError` naming `path`: `noSuchFile` (no such directory), `isADirectory`,
    ///   `permissionDenied`, `ioError` (for example ENOSPC). The target is untouched then.
    /// - Complexity: one pass over the table's bytes (hashed while written).
    public func save(to path: String, durable: Bool = true) throws(SnapshotError) {
        try SnapshotWriter(table: self, path: path).save(durable: durable)
    }
}

/// Lays out and writes one snapshot file.
struct SnapshotWriter {
    let table: QuoteTable
    let path: String

    /// One payload to write: where its bytes are in memory and where they go in the file.
    struct Source {
        var base: UnsafeRawPointer
        var length: Int
        var offset: Int
        // Keeps the memory alive while writing.
        var storage: ColumnStorage
    }

    func save(durable: Bool) throws(SnapshotError) {
        let (directory, name) = SnapshotFile.split(path)
        if name.isEmpty { throw .isADirectory(file: path) }
        if let st = SnapshotFile.status(path), SnapshotFile.isDirectory(st) { throw .isADirectory(file: path) }
        guard let dirStatus = SnapshotFile.status(directory) else { throw .noSuchFile(file: path) }
        guard SnapshotFile.isDirectory(dirStatus) else { throw .noSuchFile(file: path) }
        Self.removeStaleTemporaries(directory: directory, name: name)

        // Layout: payloads from 4096, dates first, each value column's values then its validity.
        var sources = [Source]()
        var entries = [SnapshotColumnEntry]()
        var offset = SnapshotFormat.payloadStart
        func place(_ storage: ColumnStorage, _ length: Int) -> SnapshotPayload {
            let p = SnapshotPayload(offset: offset, length: length, checksum: 0)
            sources.append(Source(base: UnsafeRawPointer(storage.base), length: length, offset: offset, storage: storage))
            offset += p.paddedLength
            return p
        }
        let all = [AnyColumn.int32(table.dates)] + table.columns
        for column in all {
            let (storage, width) = Self.valueStorage(column)
            let values = place(storage, column.count * width)
            let validity = column.validity.map { place($0.wordStorage, $0.wordCount * 8) }
            entries.append(SnapshotColumnEntry(type: column.elementType, values: values, validity: validity))
        }
        let footerOffset = offset
        var footer = SnapshotFooter(dateColumnName: table.dateColumnName, schema: table.schema, tickers: table.tickers,
                                    rowCount: table.rowCount, columns: entries, summaries: all.map { AnyBlockSummaries($0) },
                                    metadata: table.metadata)
        let footerLength = footer.encoded().count  // checksums do not change the length
        let fileLength = footerOffset + footerLength + SnapshotFormat.trailerSize

        let random = SystemRandomNumberGenerator().nextHex()
        let temporary = directory + "/.\(name).tmp-\(getpid())-\(random)"
        let fd = try SnapshotFile.open(temporary, O_WRONLY | O_CREAT | O_EXCL, mode: 0o644, file: path, operation: "create temporary file")
        var closed = false
        do throws(SnapshotError) {
            try SnapshotFile.writeAll(fd, Self.header(fileLength: fileLength, footerOffset: footerOffset), file: path)
            var checksums = [UInt64]()
            for s in sources { checksums.append(try Self.writePayload(fd, s, file: path)) }
            var k = 0
            for i in footer.columns.indices {
                footer.columns[i].values.checksum = checksums[k]; k += 1
                if footer.columns[i].validity != nil { footer.columns[i].validity!.checksum = checksums[k]; k += 1 }
            }
            let footerBytes = footer.encoded()
            var trailer = SnapshotByteWriter()
            trailer.writeUInt64LE(SnapshotChecksum.hash(footerBytes, seed: UInt64(footerOffset)))
            trailer.writeUInt64LE(UInt64(footerBytes.count))
            trailer.bytes.append(contentsOf: SnapshotFormat.magic)
            try SnapshotFile.writeAll(fd, footerBytes + trailer.bytes, file: path)
            if durable { try SnapshotFile.fsync(fd, file: path, operation: "fsync") }
            closed = true
            if close(fd) != 0 { throw SnapshotError.system(path, "close", errno) }
            if rename(temporary, path) != 0 { throw SnapshotError.system(path, "rename", errno) }
        } catch {
            if !closed { close(fd) }
            unlink(temporary)
            throw error
        }
        if durable {
            let dfd = try SnapshotFile.open(directory, O_RDONLY | O_DIRECTORY, file: path, operation: "open directory")
            defer { close(dfd) }
            try SnapshotFile.fsync(dfd, file: path, operation: "fsync directory")
        }
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

    /// Writes one payload and its zero padding, hashing each chunk just before writing it (while it
    /// is in cache). Returns the checksum.
    static func writePayload(_ fd: Int32, _ s: Source, file: String) throws(SnapshotError) -> UInt64 {
        var hasher = SnapshotChecksum(seed: UInt64(s.offset))
        let body = s.length & ~(SnapshotFormat.payloadAlignment - 1)
        let chunk = 4 << 20
        var done = 0
        while done < body {
            let n = min(chunk, body - done)
            hasher.combine(stripes: s.base + done, stripeCount: n / SnapshotChecksum.stripeBytes)
            try SnapshotFile.writeAll(fd, s.base + done, n, file: file)
            done += n
        }
        var tail = [UInt8](repeating: 0, count: s.length > body ? SnapshotFormat.payloadAlignment : 0)
        if !tail.isEmpty {
            tail.withUnsafeMutableBytes { $0.baseAddress!.copyMemory(from: s.base + body, byteCount: s.length - body) }
        }
        tail.withUnsafeBytes { hasher.combineFinal($0) }
        try SnapshotFile.writeAll(fd, tail, file: file)
        withExtendedLifetime(s.storage) {}
        return hasher.value
    }

    /// Removes `.NAME.tmp-PID-*` files in `directory` whose process no longer exists.
    static func removeStaleTemporaries(directory: String, name: String) {
        guard let dir = opendir(directory) else { return }
        defer { closedir(dir) }
        let prefix = ".\(name).tmp-"
        var stale = [String]()
        while let entry = readdir(dir) {
            let entryName = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            guard entryName.hasPrefix(prefix) else { continue }
            let rest = entryName.dropFirst(prefix.count)
            guard let dash = rest.firstIndex(of: "-"), let pid = Int32(rest[..<dash]), pid > 0, pid != getpid() else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH { stale.append(entryName) }
        }
        for s in stale { unlink(directory + "/" + s) }
    }
}

extension SystemRandomNumberGenerator {
    /// 16 random hexadecimal digits.
    func nextHex() -> String {
        var g = self
        let digits = String(g.next() as UInt64, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
