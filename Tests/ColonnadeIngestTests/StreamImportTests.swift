import Colonnade
import ColonnadeTestSupport
import DecodingTestSupport
import DataLinkFormat
@testable import ColonnadeIngest
import Foundation
import Testing

/// `QuoteImporter.importStream` (`colonnade import -`): a body read from a pipe, decoded while it
/// is read, gives exactly what `importBytes` gives for the same bytes — table or error — whatever
/// the chunk size and threads.
@Suite("Importing a stream")
struct StreamImportTests {
    /// Runs `importStream` on a real pipe whose other end a thread fills with `bytes`.
    static func importThroughPipe(_ bytes: [UInt8], threads: Int, chunkSize: Int) -> Result<QuoteTable, ResponseError> {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { return .failure(.empty(source: "pipe() failed")) }
        let (readEnd, writeEnd) = (fds[0], fds[1])
        let writer = Thread {
            bytes.withUnsafeBytes { raw in
                var done = 0
                while done < raw.count {
                    let n = write(writeEnd, raw.baseAddress! + done, raw.count - done)
                    if n <= 0 { break }  // the reader stopped (EPIPE): fine
                    done += n
                }
            }
            close(writeEnd)
        }
        writer.start()
        defer { close(readEnd) }
        do {
            return .success(try QuoteImporter.importStream(readEnd, source: "standard input", threads: threads, chunkSize: chunkSize))
        } catch {
            return .failure(error)
        }
    }

    static func expectSame(_ bytes: [UInt8], _ label: String) {
        let expected: Result<QuoteTable, ResponseError>
        do { expected = .success(try QuoteImporter.importBytes(bytes, source: "standard input")) } catch { expected = .failure(error) }
        for threads in [1, 2, 3] {
            for chunkSize in [1, 100, 4099, 1 << 20] {
                let got = importThroughPipe(bytes, threads: threads, chunkSize: chunkSize)
                switch (expected, got) {
                case (.success(var a), .success(var b)):
                    a.computeSummaries()
                    b.computeSummaries()
                    #expect(a == b, "\(label): threads \(threads), chunks of \(chunkSize)")
                case (.failure(let a), .failure(let b)):
                    #expect(a == b, "\(label): threads \(threads), chunks of \(chunkSize)")
                default:
                    Issue.record("\(label): threads \(threads), chunks of \(chunkSize): expected \(expected), got \(got)")
                }
            }
        }
    }

    @Test func everyResponseShapeImportsAsItsBytesDo() throws {
        for name in ["WIKI-PRICES.datatable.2014.csv", "WIKI-AAPL.2014.asc.csv", "WIKI-AMZN.dataset.json", "WIKI-PRICES.datatable.json"] {
            Self.expectSame([UInt8](try Fixtures.quandl(name)), name)
        }
        let zip = [UInt8](try Data(contentsOf: Fixtures.exportDirectory.appendingPathComponent("WIKI-PRICES.export.zip")))
        Self.expectSame(zip, "a zip on standard input")
    }

    /// Quoted fields holding commas, line ends and doubled quotes (a quoted ticker among them),
    /// CRLF line ends, a byte order mark, and nulls: cuts must fall outside the quotes.
    @Test func quotedFieldsAndCRLFDecodeAsWhole() {
        var text = "\u{FEFF}ticker,date,open,close,note\r\n"
        var rng = SplitMix64(seed: 5)
        for t in ["AAA", "BB\"\"B", "C,C"] {
            for d in 1 ... 60 {
                let note = rng.chance(3) ? "\"line\nbreak, \"\"quoted\"\"\"" : (rng.chance(2) ? "" : "plain")
                let ticker = t.contains(",") || t.contains("\"") ? "\"\(t)\"" : t
                text += "\(ticker),2014-03-\(String(format: "%02d", d % 28 + 1)),\(d).5,\(rng.chance(9) ? "" : "\(d).25"),\(note)\r\n"
                if d % 28 == 0 { break }
            }
        }
        Self.expectSame(Array(text.utf8), "quoted")
    }

    @Test func badBodiesFailAsTheirBytesDo() throws {
        var csv = [UInt8](try Fixtures.quandl("WIKI-PRICES.datatable.2014.csv"))
        // A bad value near the end, and a repeated row far from its first copy.
        var bad = csv
        let at = try #require(bad.lastIndex(of: UInt8(ascii: ".")))
        bad[at] = UInt8(ascii: "x")
        Self.expectSame(bad, "a bad value")
        let lines = csv.split(separator: UInt8(ascii: "\n")).map { Array($0) }
        csv += lines[1] + [UInt8(ascii: "\n")]
        Self.expectSame(csv, "a duplicate row")
        Self.expectSame(Array("ticker,date,close\n".utf8), "a header and no rows")
        Self.expectSame([], "nothing")
        Self.expectSame(Array("\n\n  \n".utf8), "blank lines")
        Self.expectSame(Array("<html>no</html>".utf8), "HTML")
    }

    /// A chunk to read into that cannot be allocated (2^50 bytes here) is an error naming the
    /// stream, as for a file too large to read, not a stop of the process. The pipe is filled and
    /// closed before the import (a few lines, less than any pipe's buffer), so no writer is left
    /// writing to a pipe whose reader has gone (SIGPIPE).
    @Test func aChunkThatCannotBeAllocatedIsAnError() throws {
        let bytes = [UInt8](try Fixtures.quandl("WIKI-AAPL.2014.asc.csv").prefix(2_000))
        var fds: [Int32] = [0, 0]
        try #require(pipe(&fds) == 0)
        defer { close(fds[0]) }
        let written = bytes.withUnsafeBytes { write(fds[1], $0.baseAddress!, $0.count) }
        close(fds[1])
        try #require(written == bytes.count)
        let error = #expect(throws: ResponseError.self) {
            _ = try QuoteImporter.importStream(fds[0], source: "standard input", threads: 1, chunkSize: 1 << 50)
        }
        #expect(
            error == .decoding(.unreadable(path: "standard input", reason: "out of memory: cannot allocate 1048576.0 GiB to read into")))
        #expect(error?.description == "standard input: cannot read: out of memory: cannot allocate 1048576.0 GiB to read into")
    }
}
