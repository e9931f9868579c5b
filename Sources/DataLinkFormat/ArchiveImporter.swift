import Colonnade
import Dispatch
import Foundation

/// Imports a zip archive of Data Link responses (a whole-table export, or any zip of CSV and JSON
/// response files) into one table.
///
///     let table = try ArchiveImporter.importArchive(atPath: "WIKI_PRICES.zip")
///
/// A datatable CSV member (the export's shape) is inflated and decoded at the same time: the
/// calling thread inflates (`ZipArchive.stream`), cuts the output at line ends into chunks of
/// `chunkSize` bytes, and hands each chunk to a worker thread that decodes it into a table; the
/// tables are merged in file order at the end. At most `threads + 1` chunks are in flight, so
/// memory is the decoded columns plus a few chunks, whatever the CSV's size. Other members
/// (time-series CSV, JSON) are extracted whole and decoded as `QuoteImporter` decodes files.
///
/// The result is the table decoding the uncompressed file would give, bit for bit; and the
/// errors are the same: when a chunk fails to decode, or two chunks hold the same ticker and
/// date, the member is extracted whole and decoded in one piece, so the error names the member
/// (`archive.zip:MEMBER.csv`) with the byte, line and row of the uncompressed file. Members
/// named `__MACOSX/…` and directories are skipped. Nothing is returned unless every member
/// decodes and passes its CRC-32 and size checks.
public enum ArchiveImporter {
    /// Tuning for the pipeline; the defaults suit large exports.
    public struct Options: Sendable {
        /// The zip-bomb guard.
        public var limits: ZipLimits
        /// Threads in all: one inflates, the rest decode (at least one). Default: the cores.
        public var threads: Int
        /// Bytes of CSV per chunk.
        public var chunkSize: Int
        /// The ticker for single-ticker members, overriding their contents and names.
        public var ticker: String?

        /// Options; see the properties.
        public init(limits: ZipLimits = .standard, threads: Int = ProcessInfo.processInfo.activeProcessorCount,
                    chunkSize: Int = 4 << 20, ticker: String? = nil) {
            self.limits = limits
            self.threads = Swift.max(1, threads)
            self.chunkSize = Swift.max(Inflater.minimumSpace, chunkSize)
            self.ticker = ticker
        }
    }

    /// Imports every member of the zip archive at `path`.
    /// - Throws: `ResponseError.archive` for a zip problem, else the first member's decode error.
    public static func importArchive(atPath path: String, options: Options = Options()) throws(ResponseError) -> QuoteTable {
        let archive: ZipArchive
        do {
            archive = try ZipArchive(contentsOfFile: path)
        } catch {
            throw .archive(error)
        }
        return try importArchive(archive, options: options)
    }

    /// Imports every member of `archive`, later members winning on equal (ticker, date).
    public static func importArchive(_ archive: ZipArchive, options: Options = Options()) throws(ResponseError) -> QuoteTable {
        var parts: [QuoteTable] = []
        for member in archive.members where !member.isDirectory && !member.name.hasPrefix("__MACOSX/") {
            parts.append(try importMember(member, of: archive, options: options))
        }
        guard !parts.isEmpty else {
            throw .empty(source: archive.name)
        }
        return QuoteTable.merging(&parts, threads: options.threads)
    }

    /// The name errors give a member: `archive.zip:member.csv`.
    public static func sourceName(_ member: ZipMember, of archive: ZipArchive) -> String {
        "\(archive.name):\(member.name)"
    }

    /// Decodes one member: pipelined when it is a datatable CSV, else whole.
    public static func importMember(_ member: ZipMember, of archive: ZipArchive, options: Options = Options()) throws(ResponseError) -> QuoteTable {
        if let table = try pipelined(member, of: archive, options: options) { return table }
        return try decodeWhole(member, of: archive, options: options)
    }

    /// Extracts the member and decodes it in one piece.
    static func decodeWhole(_ member: ZipMember, of archive: ZipArchive, options: Options) throws(ResponseError) -> QuoteTable {
        let bytes: [UInt8]
        do {
            bytes = try archive.extract(member, limits: options.limits)
        } catch {
            throw .archive(error)
        }
        let name = QuoteImporter.fileName(of: member.name)
        var table = try QuoteDecoder.decode(bytes, ticker: options.ticker, fallbackTicker: QuoteImporter.tickerSymbol(fromFileName: name),
                                            source: sourceName(member, of: archive)).table
        table.computeSummaries()
        return table
    }

    // MARK: The pipeline

    /// The member decoded by the pipeline; nil when it is not a datatable CSV or a chunk failed
    /// (the caller then decodes it whole, which gives the exact error).
    static func pipelined(_ member: ZipMember, of archive: ZipArchive, options: Options) throws(ResponseError) -> QuoteTable? {
        let source = sourceName(member, of: archive)
        let pipeline = ChunkPipeline(maximumInFlight: options.threads + 1)
        var layout: CSVScanner.Layout?
        var notDatatable = false
        var index = 0
        do {
            try archive.stream(member, limits: options.limits, chunkSize: options.chunkSize) { chunk in
                if pipeline.failed { return nil }
                let data = chunk.data
                // Whole lines only, except in the last chunk.
                var end = data.count
                if !chunk.isLast {
                    guard let newline = data.lastIndex(of: UInt8(ascii: "\n")) else { return data.count }
                    end = newline + 1
                }
                var start = 0
                if layout == nil {
                    // The first lines: skip a byte order mark and blanks, sniff, read the header.
                    guard let base = data.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return data.count - end }
                    var p = 0
                    if end >= 3 && base[0] == 0xEF && base[1] == 0xBB && base[2] == 0xBF { p = 3 }
                    while p < end && ByteInput.isBlank(base[p]) { p += 1 }
                    if p == end { return chunk.isLast ? 0 : data.count - p }
                    if base[p] == UInt8(ascii: "{") || base[p] == UInt8(ascii: "[") || base[p] == UInt8(ascii: "<") {
                        notDatatable = true
                        return nil
                    }
                    var decoder = CSVScanner(input: ByteInput(base: base, count: end, source: source), position: p)
                    guard let read = try? decoder.readLayout(), read.isDatatable else {
                        notDatatable = true
                        return nil
                    }
                    layout = read
                    start = decoder.position
                }
                guard let layout else { return nil }
                let piece = index
                index += 1
                let first = start, stop = end
                pipeline.submit(piece) {
                    // Safe: the chunk is kept alive by this closure and never changes.
                    let base = chunk.base + chunk.dataStart + first
                    var decoder = CSVScanner(input: ByteInput(base: base, count: stop - first, source: source), position: 0)
                    return try? decoder.decodeDatatableRows(layout)
                }
                return data.count - end
            }
        } catch {
            pipeline.finish()
            if pipeline.failed { return nil }
            throw .archive(error)
        }
        pipeline.finish()
        if notDatatable || pipeline.failed { return nil }
        var parts = pipeline.results
        if parts.isEmpty {
            // A header and no rows.
            return nil
        }
        if hasDuplicatesAcrossChunks(parts) { return nil }
        // Cuts are at the last LF of a chunk, quotes or not: a cut inside a quoted field shows
        // as a failed chunk or as a ticker holding a `"`; either way the member decodes whole.
        for part in parts where part.tickers.contains(where: { $0.symbol.utf8.contains(UInt8(ascii: "\"")) }) { return nil }
        return QuoteTable.merging(&parts, threads: options.threads)
    }

    /// Whether two chunks hold a row for the same ticker and date (one chunk's own duplicates
    /// are its decode error).
    static func hasDuplicatesAcrossChunks(_ parts: [QuoteTable]) -> Bool {
        var last: [String: Int32] = [:]
        var suspects = Set<String>()
        for part in parts {
            for t in part.tickers where t.rowCount > 0 {
                let first = part.dates[t.firstRow], final = part.dates[t.firstRow + t.rowCount - 1]
                if let previous = last[t.symbol], first <= previous { suspects.insert(t.symbol) }
                last[t.symbol] = Swift.max(last[t.symbol] ?? final, final)
            }
        }
        for symbol in suspects {
            var seen = Set<Int32>()
            for part in parts {
                guard let t = part.ticker(symbol) else { continue }
                for row in t.rows where !seen.insert(part.dates[row]).inserted { return true }
            }
        }
        return false
    }
}

/// Runs numbered jobs on the global queue, at most `maximumInFlight` at once (`submit` waits for
/// room), and keeps their results in number order. A job returning nil marks the pipeline failed.
final class ChunkPipeline: @unchecked Sendable {
    // Safe: `slots` and `failedFlag` are guarded by `lock`; `room` and `group` are thread-safe.
    private let lock = NSLock()
    private let room: DispatchSemaphore
    private let group = DispatchGroup()
    private var slots: [QuoteTable?] = []
    private var failedFlag = false

    init(maximumInFlight: Int) {
        room = DispatchSemaphore(value: Swift.max(1, maximumInFlight))
    }

    var failed: Bool { lock.withLock { failedFlag } }

    func submit(_ index: Int, _ job: @escaping @Sendable () -> QuoteTable?) {
        room.wait()
        lock.withLock { while slots.count <= index { slots.append(nil) } }
        DispatchQueue.global().async(group: group) {
            let result = job()
            self.lock.withLock {
                if let result { self.slots[index] = result } else { self.failedFlag = true }
            }
            self.room.signal()
        }
    }

    /// Waits for every submitted job.
    func finish() { group.wait() }

    /// The results in order (after `finish`).
    var results: [QuoteTable] { lock.withLock { slots.compactMap { $0 } } }
}
