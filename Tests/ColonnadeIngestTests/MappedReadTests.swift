import Colonnade
import ColonnadeTestSupport
import DecodingTestSupport
@testable import DataLinkFormat
@testable import ColonnadeIngest
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `withContents` maps large files (`GuardedFileMapping`) instead of reading them: the same
/// bytes and the same import, and a file that shrinks while it is read is an error naming it,
/// not a SIGBUS.
@Suite struct MappedReadTests {
    @Test func aMappedFileGivesTheBytesAndTheImportAReadOneGives() throws {
        let dir = ImportTests.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let table = ParallelImportTests.randomTable(seed: 21, tickers: 30)
        let path = dir + "/quotes.csv"
        try QuoteGenerator.writeDatatableCSV(table, to: path)
        let expected = try Data(contentsOf: URL(fileURLWithPath: path))
        for threads in 1 ... 2 {
            let mapped = try QuoteImporter.withContents(ofFile: path, threads: threads, mappedReadSize: 1) { Data($0) }
            let read = try QuoteImporter.withContents(ofFile: path, threads: threads, mappedReadSize: .max) { Data($0) }
            #expect(mapped == expected && read == expected)
            let viaMapping = try QuoteImporter.withContents(ofFile: path, threads: threads, mappedReadSize: 1) {
                bytes throws(ResponseError) in
                try QuoteDecoder.decode(bytes, source: "quotes.csv").table
            }
            #expect(viaMapping == (try QuoteImporter.importFiles([path], threads: threads)))
        }
    }

    @Test func aFileThatShrinksWhileMappedIsAnErrorNamingIt() throws {
        let dir = ImportTests.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/quotes.csv"
        try QuoteGenerator.writeDatatableCSV(ParallelImportTests.randomTable(seed: 22, tickers: 40), to: path)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        #expect(size > 64 << 10)
        var error: ResponseError?
        do {
            _ = try QuoteImporter.withContents(ofFile: path, mappedReadSize: 1) { bytes throws(ResponseError) -> QuoteTable in
                // Someone cuts the file to a quarter while it is being decoded.
                #expect(truncate(path, off_t(size / 4)) == 0)
                return try QuoteDecoder.decode(bytes, source: "quotes.csv").table
            }
        } catch let e {
            error = e
        }
        let message = "\(try #require(error))"
        #expect(message.contains("quotes.csv") && message.contains("shrank while it was being read"), "\(message)")
    }

    /// Whether the temporary directory's filesystem holds a sparse file of 8 TiB (tmpfs and ext4
    /// do; a filesystem with a smaller largest file does not, and the test below is skipped).
    static func holdsSparseFilesOf8TiB() -> Bool {
        let dir = ImportTests.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/probe"
        return FileManager.default.createFile(atPath: path, contents: nil) && truncate(path, off_t(8) << 40) == 0
    }

    @Test(.enabled(if: holdsSparseFilesOf8TiB(), "the temporary directory's filesystem cannot hold a sparse 8 TiB file"))
    func aFileReadIntoABufferTooLargeForMemoryIsAnErrorNamingIt() throws {
        // A sparse 8 TiB file, read (not mapped): no buffer of that size can be had.
        let dir = ImportTests.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/huge.csv"
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        try #require(truncate(path, off_t(8) << 40) == 0, "the probe made such a file: errno \(errno)")
        var caught: ResponseError?
        do {
            _ = try QuoteImporter.withContents(ofFile: path, mappedReadSize: .max) { bytes throws(ResponseError) in bytes.count }
        } catch {
            caught = error
        }
        let message = "\(try #require(caught))"
        #expect(
            message.contains("huge.csv") && message.contains("out of memory: cannot allocate 8192.0 GiB to hold the file"), "\(message)")
    }

    @Test func aHeaderOrTickerOfGigabytesIsRefusedNotCopied() throws {
        // Text longer than ByteInput.maximumTextLength: an error at its first byte.
        let long = String(repeating: "A", count: ByteInput.maximumTextLength + 1)
        for (body, expected) in [
            ("\(long),date,close\nX,2020-01-02,1\n", "a column name of at most 4096 bytes"),
            ("ticker,date,close\n\(long),2020-01-02,1\n", "a ticker of at most 4096 bytes"),
            (
                "{\"datatable\":{\"data\":[[\"\(long)\",\"2020-01-02\",1]],\"columns\":[{\"name\":\"ticker\",\"type\":\"String\"},"
                    + "{\"name\":\"date\",\"type\":\"Date\"},{\"name\":\"close\",\"type\":\"double\"}]},\"meta\":{\"next_cursor_id\":null}}",
                "a ticker of at most 4096 bytes"
            ),
            ("{\"dataset_data\":{\"column_names\":[\"Date\",\"\(long)\"],\"data\":[]}}", "of at most 4096 bytes each"),
        ] {
            var caught: ResponseError?
            do { _ = try QuoteDecoder.decode(Array(body.utf8), source: "long") } catch { caught = error }
            let message = "\(try #require(caught))"
            #expect(message.contains(expected), "\(message)")
        }
    }
}
