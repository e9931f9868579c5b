#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Colonnade
import DataLinkFormat

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
    package static func importStream(
        _ fd: Int32, source: String, ticker: String? = nil,
        archiveOptions: ArchiveImporter.Options = ArchiveImporter.Options(),
        threads: Int = 1, chunkSize: Int = 4 << 20
    ) throws(ResponseError) -> QuoteTable {
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
        // Whole: what was read so far, then the rest, into one buffer that grows (an error, not a
        // stop of the process, when it cannot).
        let body = WholeBody(source: source)
        try body.reserve(chunks.reduce(0) { $0 + $1.newBytes.count } + (1 << 20))
        for chunk in chunks { try body.append(chunk.newBytes) }
        chunks = []
        if !ended { try body.readToEnd(from: fd) }
        // A zip archive takes the body's buffer over, without a copy.
        return try importBody(body.bytes, source: source, ticker: ticker, archiveOptions: archiveOptions) { () throws(ZipError) in
            guard let (base, count) = body.take() else { throw .notAZip(archive: source, detail: "the input is empty") }
            return try ZipArchive(owningMallocBytes: base, count: count, name: source)
        }
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
            let n = SystemCall.retryingOnInterrupt { read(fd, chunk.base + chunk.count, chunk.capacity - chunk.count) }
            if n < 0 { throw .decoding(.unreadable(path: source, reason: String(cString: strerror(errno)))) }
            if n == 0 { return true }
            chunk.count += n
        }
        return false
    }
}

/// A body read whole into one `malloc`ed buffer that doubles as it fills. A buffer that cannot
/// grow is `.decoding(.unreadable)` naming the input (out of memory), as for a file too large to
/// read, not a stop of the process (a Swift array's growth would stop it).
private final class WholeBody {
    private var base: UnsafeMutableRawPointer?
    private(set) var count = 0
    private var capacity = 0
    let source: String

    init(source: String) { self.source = source }

    deinit { free(base) }

    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }

    /// Room for at least `needed` bytes in all.
    func reserve(_ needed: Int) throws(ResponseError) {
        guard needed > capacity else { return }
        var target = Swift.max(needed, capacity.multipliedReportingOverflow(by: 2).partialValue)
        var grown = realloc(base, target)
        if grown == nil && target > needed {
            target = needed  // doubling did not fit; the exact size still may
            grown = realloc(base, target)
        }
        guard let grown else {
            throw .decoding(
                .unreadable(path: source, reason: "out of memory: cannot allocate \(DecodeError.sizeText(target)) to hold the input"))
        }
        base = grown
        capacity = target
    }

    func append(_ more: UnsafeRawBufferPointer) throws(ResponseError) {
        guard let from = more.baseAddress, more.count > 0 else { return }
        try reserve(count + more.count)
        // Safe: reserve made room for count + more.count bytes.
        (base! + count).copyMemory(from: from, byteCount: more.count)
        count += more.count
    }

    /// Reads `fd` to its end.
    func readToEnd(from fd: Int32) throws(ResponseError) {
        while true {
            if count == capacity { try reserve(count + (1 << 20)) }
            // Safe: count < capacity.
            let n = SystemCall.retryingOnInterrupt { read(fd, base! + count, capacity - count) }
            if n < 0 { throw .decoding(.unreadable(path: source, reason: String(cString: strerror(errno)))) }
            if n == 0 { return }
            count += n
        }
    }

    /// Hands the buffer (to be freed with `free`) and its byte count over; the body is empty after.
    func take() -> (UnsafeMutableRawPointer, Int)? {
        guard let taken = base else { return nil }
        defer {
            base = nil
            count = 0
            capacity = 0
        }
        return (taken, count)
    }
}
