#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Colonnade

/// Importing one response read from a stream (a pipe on standard input), decoding while reading.
extension QuoteImporter {
    /// Reads one response body, or a zip archive of them, from `fd` until end of file, and decodes
    /// it. A datatable CSV is decoded while it is read (`CSVStreamDecoder`: this thread reads,
    /// workers decode chunks cut at line ends); anything else (a zip, JSON, a time-series CSV) is
    /// read whole, then decoded as `importBytes` does. The result and the errors are those of
    /// `importBytes` on the same bytes: when a piece fails, the rest is read and the whole body
    /// is decoded in one piece for the exact error.
    ///
    /// - Parameters:
    ///   - fd: the stream (not closed here).
    ///   - source: the input's name for messages ("standard input").
    ///   - chunkSize: bytes read per chunk (tests make it small).
    /// - Throws: `ResponseError`: `.decoding(.unreadable)` when reading fails, else the decoder's.
    public static func importStream(_ fd: Int32, source: String, ticker: String? = nil,
                                    archiveOptions: ArchiveImporter.Options = ArchiveImporter.Options(),
                                    threads: Int = 1, chunkSize: Int = 4 << 20) throws(ResponseError) -> QuoteTable {
        var chunks: [ReadChunk] = []
        let first = try ReadChunk(capacity: Swift.max(chunkSize, 4096), source: source)
        var ended = try fill(first, from: fd, source: source)
        chunks.append(first)
        if isStreamableCSV(first.data) {
            let decoder = CSVStreamDecoder(source: source, totalBytes: nil, threads: Swift.max(1, threads), checksums: false)
            var chunk = first
            var stopped = false
            while true {
                guard let keep = decoder.feed(chunk.data, newBytes: chunk.newBytes, isLast: ended, owner: chunk) else {
                    stopped = true
                    break
                }
                if ended { break }
                let next: ReadChunk
                do {
                    next = try ReadChunk(capacity: keep + chunkSize, source: source)
                    // Safe: `keep` <= chunk.count bytes at the end of the previous chunk.
                    next.base.copyMemory(from: chunk.base + chunk.count - keep, byteCount: keep)
                    next.count = keep
                    next.newStart = keep
                    ended = try fill(next, from: fd, source: source)
                } catch {
                    decoder.cancel()
                    _ = decoder.finish()
                    throw error
                }
                chunks.append(next)
                chunk = next
            }
            if stopped { decoder.cancel() }
            if case .table(let table, _) = decoder.finish(), !stopped {
                return table
            }
        }
        // Whole: what was read so far, then the rest.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(chunks.reduce(0) { $0 + $1.newBytes.count })
        for chunk in chunks { bytes.append(contentsOf: chunk.newBytes) }
        chunks = []
        while !ended {
            let more = try ReadChunk(capacity: 1 << 20, source: source)
            ended = try fill(more, from: fd, source: source)
            bytes.append(contentsOf: more.newBytes)
        }
        return try importBytes(bytes, source: source, ticker: ticker, archiveOptions: archiveOptions)
    }

    /// Whether the first bytes read start like a CSV (not a zip, JSON or HTML body).
    private static func isStreamableCSV(_ head: UnsafeRawBufferPointer) -> Bool {
        if ZipArchive.looksLikeZip(head) { return false }
        let first = head.first { !ByteInput.isBlank($0) && $0 != 0xEF && $0 != 0xBB && $0 != 0xBF }
        guard let first else { return false }
        return first != UInt8(ascii: "{") && first != UInt8(ascii: "[") && first != UInt8(ascii: "<")
    }

    /// Reads into `chunk` until it is full or the stream ends; whether it ended.
    private static func fill(_ chunk: ReadChunk, from fd: Int32, source: String) throws(ResponseError) -> Bool {
        while chunk.count < chunk.capacity {
            let n = read(fd, chunk.base + chunk.count, chunk.capacity - chunk.count)
            if n < 0 {
                if errno == EINTR { continue }
                throw .decoding(.unreadable(path: source, reason: String(cString: strerror(errno))))
            }
            if n == 0 { return true }
            chunk.count += n
        }
        return false
    }
}
