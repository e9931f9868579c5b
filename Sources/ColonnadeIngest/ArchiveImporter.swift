import Colonnade
import DataLinkFormat
import Dispatch
import Foundation

/// Imports a zip archive of Data Link responses (a whole-table export, or any zip of CSV and JSON
/// response files) into one table.
///
///     let table = try ArchiveImporter.importArchive(atPath: "WIKI_PRICES.zip")
///
/// A datatable CSV member (the export's shape) is inflated and decoded at the same time
/// (`CSVStreamDecoder`): the calling thread only inflates (`ZipArchive.stream`), and hands each
/// chunk of about `chunkSize` bytes, cut after its last line end outside quotes, to a worker that
/// checksums its new bytes and decodes its lines into row buffers; the pieces are copied, in
/// file order, into the member's final columns as they finish (a streaming `ColumnAssembler`). At most
/// `threads + 1` chunks are in flight, so memory is the decoded columns plus a few chunks, whatever
/// the CSV's size. Other members (time-series CSV, JSON) are extracted whole and decoded as
/// `QuoteImporter` decodes files.
///
/// The result is the table decoding the uncompressed file would give, bit for bit; and the
/// errors are the same: when a piece fails to decode, or two pieces hold the same ticker and
/// date, the inflation stops and the member is extracted whole and decoded in one piece, so the
/// error names the member (`archive.zip:MEMBER.csv`) with the byte, line and row of the
/// uncompressed file. Members named `__MACOSX/…` and directories are skipped. Nothing is returned
/// unless every member decodes and passes its CRC-32 and size checks.
package enum ArchiveImporter {
    /// Tuning for the pipeline; the defaults suit large exports.
    package struct Options: Sendable {
        /// The zip-bomb guard.
        package var limits: ZipLimits
        /// Threads in all: one inflates, the rest decode (at least one). Default: the cores.
        package var threads: Int
        /// Bytes of CSV per chunk.
        package var chunkSize: Int
        /// The ticker for single-ticker members, overriding their contents and names.
        package var ticker: String?
        /// Counters of the pipeline's work, for tests.
        package var statistics: PipelineStatistics?

        /// Options; see the properties.
        package init(
            limits: ZipLimits = .standard, threads: Int = ProcessInfo.processInfo.activeProcessorCount,
            chunkSize: Int = 4 << 20, ticker: String? = nil
        ) {
            self.limits = limits
            self.threads = Swift.max(1, threads)
            self.chunkSize = Swift.max(Inflater.minimumSpace, chunkSize)
            self.ticker = ticker
        }
    }

    /// Imports every member of the zip archive at `path`.
    /// - Throws: `ResponseError.archive` for a zip problem, else the first member's decode error.
    package static func importArchive(atPath path: String, options: Options = Options()) throws(ResponseError) -> QuoteTable {
        let archive: ZipArchive
        do {
            archive = try ZipArchive(contentsOfFile: path)
        } catch {
            throw .archive(error)
        }
        return try importArchive(archive, options: options)
    }

    /// Imports every member of `archive`, later members winning on equal (ticker, date).
    package static func importArchive(_ archive: ZipArchive, options: Options = Options()) throws(ResponseError) -> QuoteTable {
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
    package static func sourceName(_ member: ZipMember, of archive: ZipArchive) -> String {
        "\(archive.name):\(member.name)"
    }

    /// Decodes one member: pipelined when it is a datatable CSV, else whole.
    package static func importMember(
        _ member: ZipMember, of archive: ZipArchive, options: Options = Options()
    ) throws(ResponseError) -> QuoteTable {
        if member.isSymbolicLink {
            throw .notADataLinkResponse(
                source: sourceName(member, of: archive),
                detail: "the member is a symbolic link, not a file of quotes")
        }
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
        try refuseNestedFormats(bytes, member: member, of: archive)
        let name = QuoteImporter.fileName(of: member.name)
        var table = try QuoteDecoder.decode(
            bytes, ticker: options.ticker, fallbackTicker: QuoteImporter.tickerSymbol(fromFileName: name),
            source: sourceName(member, of: archive)
        ).table
        table.computeSummaries()
        return table
    }

    /// A member that is itself a zip, a Parquet or an Arrow file is refused, saying what it is,
    /// rather than read as a malformed CSV.
    static func refuseNestedFormats(_ bytes: [UInt8], member: ZipMember, of archive: ZipArchive) throws(ResponseError) {
        let what: String? = bytes.withUnsafeBytes { raw in
            if ZipArchive.looksLikeZip(raw) { return "a zip archive inside the zip (unzip the outer one first)" }
            if raw.count >= 4 && raw[0] == 0x50 && raw[1] == 0x41 && raw[2] == 0x52 && raw[3] == 0x31 {
                return "a Parquet file inside a zip (unzip it and import the .parquet file)"
            }
            if raw.count >= 6 && Array(raw[0 ..< 6]) == Array("ARROW1".utf8) || raw.count >= 4 && raw.load(as: UInt32.self) == 0xFFFF_FFFF {
                return "an Arrow IPC file inside a zip (unzip it and import the .arrow file)"
            }
            return nil
        }
        if let what { throw .notADataLinkResponse(source: sourceName(member, of: archive), detail: "the member is " + what) }
    }

    // MARK: The pipeline

    /// The member decoded by the pipeline; nil when it is not a datatable CSV, a piece failed or
    /// the stream failed other than by the limits (the caller then decodes it whole, which gives
    /// the exact error).
    ///
    /// This thread only inflates (`ZipArchive.stream` with `checksByCaller`); the CRC-32 of each
    /// chunk is computed by the worker that decodes it and joined in order, then checked here
    /// before the table is returned. A failed piece stops the inflation at the next chunk.
    static func pipelined(_ member: ZipMember, of archive: ZipArchive, options: Options) throws(ResponseError) -> QuoteTable? {
        let decoder = CSVStreamDecoder(
            source: sourceName(member, of: archive), totalBytes: member.uncompressedSize,
            threads: options.threads, checksums: true)
        options.statistics?.started()
        var completed = false
        do {
            try archive.stream(member, limits: options.limits, chunkSize: options.chunkSize, checksByCaller: true) { chunk in
                options.statistics?.inflated(chunk.newBytes.count)
                let keep = decoder.feed(chunk.data, newBytes: chunk.newBytes, isLast: chunk.isLast, owner: chunk)
                if keep != nil && chunk.isLast { completed = true }
                return keep
            }
        } catch {
            decoder.cancel()
            _ = decoder.finish()
            // Over the limits: refused here, not inflated again whole into memory. Any other
            // error (corrupt data, a size that differs from the recorded one) is the whole
            // member's to give: which of two faults the stream meets first depends on its chunk
            // size (sizes are checked per chunk), and the error must not (Zip fuzz finding 10).
            if case .tooLarge = error { throw .archive(error) }
            return nil
        }
        let outcome = decoder.finish()
        guard completed, case .table(let table, let crc) = outcome else { return nil }
        do {
            try archive.checkChecksum(member, crc)
        } catch {
            throw .archive(error)
        }
        return table
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
