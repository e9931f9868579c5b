#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// A new snapshot whose column payloads are written in place while a fresh import decodes: the
/// temporary file of a `ReplacementFile`, its payload area reserved (`fallocate`) at offsets
/// fixed up front, so each decoded input's rows go from the decoder's buffers through a small,
/// hot scratch buffer into their place in the file with `pwrite` (`ColumnAssembler(draft:)`),
/// and the disk can write them back while later inputs decode, instead of the finished columns
/// being copied into the file afterwards (ARCHITECTURE.md, *Importing many files*). A shared,
/// read-only mapping of the payload area reads them back (block summaries across inputs, the
/// table's columns), from the page cache.
///
/// Why `pwrite` and not a writable shared mapping: a write fault on a page of the file first
/// fills it with zeros (`filemap_fault` → a zeroing "read" of the unwritten extent), which took
/// a quarter of a medium import's CPU; a `pwrite` of whole pages into the page cache does not.
///
/// The layout is fixed up front from the exact row count and the value columns' widths
/// (`SnapshotWriter.plannedOffsets`, the writer's own placement: values first, validity bitmaps
/// after all of them). `commit` hands the finished table to `SnapshotWriter`, which lays it out
/// as for any save; only when its row count is the planned one and every value payload is
/// already at its place in the mapping does it write the header, the bitmaps of the columns
/// that have nulls, and the footer (checksums of the values computed from the mapping), and
/// rename the file over the target. Otherwise (another row count) `commit` returns false and
/// writes nothing: the caller saves the table the ordinary way. Released without a commit, the
/// temporary is removed and the target is untouched.
///
/// For a target that does not exist yet, under the snapshot's write lock: nothing else is merged.
package final class SnapshotDraft: @unchecked Sendable {
    // Safe to share: `write` calls write disjoint ranges (`pwrite` moves no file position), the
    // first failure goes through a mutex; `commit` and `discard` run after every write.

    /// The snapshot path as given.
    package let path: String
    /// Rows the payloads hold.
    package let rowCount: Int
    /// The file offsets of the date payload and of each value column's payload.
    package let payloadOffsets: [Int]
    /// Where the footer goes: the end of the mapped payload area.
    package let footerOffset: Int
    private let file: ReplacementFile
    private let mapping: Mapping
    private let writeFailure = Mutex<SnapshotError?>(nil)
    /// Payload bytes written so far, and every how many of them `write` starts the writeback of
    /// what is dirty (0: never).
    private let written = Atomic<Int>(0)
    private let writebackStride: Int
    /// 16 MiB: a medium import (500 MB) starts about 30 writebacks of 2 ms each, and its final
    /// `fsync` took 8 ms instead of 256 ms.
    package static let defaultWritebackStride = 16 << 20

    /// The shared, read-only mapping of the payload area. Columns made from it are views with this
    /// object as their owner, so it stays mapped while they live (also after the rename, or after
    /// a discard: the mapping keeps the inode).
    final class Mapping: @unchecked Sendable {
        // Safe to share: see SnapshotDraft.
        let base: UnsafeMutableRawPointer
        let size: Int

        init(base: UnsafeMutableRawPointer, size: Int) {
            self.base = base
            self.size = size
        }

        deinit { munmap(base, size) }
    }

    /// Creates the temporary beside `path`'s target, reserves its payload area for `rowCount`
    /// rows of a date column and value columns of widths `valueWidths`, and maps it.
    /// With a `writebackStride` above 0 (for a save that ends in `fsync`), every that many bytes
    /// written start the disk writing back the payload area's dirty pages.
    /// - Throws: `SnapshotError` (as a save would), also when the filesystem cannot reserve the
    ///   blocks up front (then a full disk would fault a write into the mapping instead of
    ///   failing a call): the caller imports the ordinary way.
    package init(replacing path: String, rowCount: Int, valueWidths: [Int], writebackStride: Int = 0) throws(SnapshotError) {
        precondition(rowCount > 0, "a draft holds rows")
        let (offsets, footerOffset) = SnapshotWriter.plannedOffsets(rowCount: rowCount, valueWidths: valueWidths)
        let file: ReplacementFile
        do { file = try ReplacementFile(replacing: path, readable: true) } catch { throw SnapshotError(error, file: path) }
        do throws(SnapshotError) {
            guard try SnapshotFile.reserve(file.fileDescriptor, length: footerOffset, file: path) else {
                throw .ioError(file: path, operation: "fallocate", errno: EOPNOTSUPP)
            }
        } catch {
            file.discard()
            throw error
        }
        let p = mmap(nil, footerOffset, PROT_READ, MAP_SHARED, file.fileDescriptor, 0)
        guard let p, p != MAP_FAILED else {
            let code = errno
            file.discard()
            throw .system(path, "mmap", code)
        }
        self.path = path
        self.rowCount = rowCount
        self.payloadOffsets = offsets
        self.footerOffset = footerOffset
        self.file = file
        self.mapping = Mapping(base: p, size: footerOffset)
        self.writebackStride = Swift.max(0, writebackStride)
    }

    /// Where payload `k` (0 the dates, k the value column k − 1) starts in the mapping.
    package func payload(_ k: Int) -> UnsafeRawPointer { UnsafeRawPointer(mapping.base + payloadOffsets[k]) }

    /// Writes `count` bytes at `bytes` into payload `k` from its byte `at` on. A failure is kept
    /// (the first one) and thrown by `commit`.
    ///
    /// With a writeback stride, the write that crosses a multiple of the stride then starts the
    /// writeback of every dirty page of the payload area (`sync_file_range` WRITE, which skips
    /// clean pages and pages already being written): the disk writes while later inputs decode,
    /// and the final `fsync` waits only for the last stride. A page that inputs share is written
    /// again when the next one dirties it; the `fsync` alone makes the file durable.
    /// - Precondition: the range lies within the payload; no other call writes it.
    package func write(_ bytes: UnsafeRawPointer, count: Int, intoPayload k: Int, at offset: Int) {
        precondition(offset >= 0 && offset + count <= payloadCapacity(k), "write outside the payload")
        do throws(SnapshotError) {
            try SnapshotFile.writeAll(file.fileDescriptor, bytes, count, at: payloadOffsets[k] + offset, file: path)
        } catch {
            writeFailure.withLock { if $0 == nil { $0 = error } }
        }
        if writebackStride > 0 {
            let before = written.add(count, ordering: .relaxed).oldValue
            if before / writebackStride != (before + count) / writebackStride {
                SnapshotFile.startWriteback(file.fileDescriptor, offset: 0, count: footerOffset)
            }
        }
    }

    /// Bytes from payload `k`'s start to the next payload (or the footer).
    package func payloadCapacity(_ k: Int) -> Int {
        (k + 1 < payloadOffsets.count ? payloadOffsets[k + 1] : footerOffset) - payloadOffsets[k]
    }

    /// What keeps the mapping alive: the owner of column views into it.
    package var owner: AnyObject { mapping }

    /// Makes `table` (whose columns the caller filled in this draft's payloads) the snapshot at
    /// `path`: header, checksums of the values (from the mapping, on up to `threads` threads),
    /// the validity bitmaps, footer and trailer, then `fsync` (with `durable`), rename, `fsync` of
    /// the directory.
    /// - Returns: false, having written nothing, when `table` is not what this draft planned (its
    ///   row count, or values not in place); the draft is discarded then and the caller saves `table`.
    /// - Throws: `SnapshotError` as `save(to:durable:)` does, or the first failed `write`; the
    ///   target is untouched then.
    package func commit(_ table: QuoteTable, durable: Bool = true, threads: Int = QueryOptions.availableCores) throws(SnapshotError) -> Bool
    {
        if let failure = writeFailure.withLock({ $0 }) {
            discard()
            throw failure
        }
        if let problem = SnapshotWriter.schemaProblem(table) {
            discard()
            throw .unsavable(file: path, reason: problem)
        }
        var writer = SnapshotWriter(table: table, path: path)
        writer.threads = threads
        writer.startsWriteback = durable
        let layout = writer.layout()
        let base = UnsafeRawPointer(mapping.base)
        // The rows planned, and the values (the layout's first payloads) where they were placed;
        // validity bitmaps, if any, follow them and are written now.
        let values = payloadOffsets.count
        guard table.rowCount == rowCount, layout.sources.count >= values,
            zip(layout.sources.prefix(values), payloadOffsets).allSatisfy({ $0.offset == $1 && $0.base == base + $1 })
        else {
            discard()
            return false
        }
        do throws(SnapshotError) {
            try writer.writeFile(file.fileDescriptor, layout, inPlace: values)
        } catch {
            discard()
            throw error
        }
        do { try file.commit(durable: durable) } catch { throw SnapshotError(error, file: path) }
        return true
    }

    /// Removes the temporary (the target is untouched); column views stay readable.
    package func discard() { file.discard() }
}
