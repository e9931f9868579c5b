import Colonnade
import DataLinkFormat
@testable import ColonnadeIngest
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Garbage is refused before a pass over it: the work an import does on a gigabyte of it is
/// counted in bytes, not waited for. The input is 1 GiB of address space of which only the first
/// 64 KiB may be read (the rest is `PROT_NONE`, so a read of any byte past them ends the test
/// process with SIGSEGV: a failure no machine load can hide or cause). The row pre-count
/// (`countDataRows`), the CSV piece layout and the decoder each see the whole gigabyte and must
/// stop within the first 64 KiB, also when the garbage follows a valid CSV header and rows (the
/// counting passes stop at the first control byte, and so does the decoder). (OutOfMemoryTests imports a real 1 GiB sparse file end to end.)
@Suite struct GarbageWorkTests {
    static let readable = 64 << 10
    static let size = 1 << 30

    /// `body` over `size` bytes starting with `prefix` then zeros, of which only `readable` can be read.
    static func withGuardedGigabyte<R>(_ prefix: [UInt8], _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        guard let base = mmap(nil, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0), base != MAP_FAILED else {
            throw POSIXError(.ENOMEM)
        }
        defer { munmap(base, size) }
        try #require(mprotect(base, readable, PROT_READ | PROT_WRITE) == 0)
        prefix.withUnsafeBytes { base.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        return try body(UnsafeRawBufferPointer(start: base, count: size))
    }

    @Test(arguments: [
        ("", "error: g.json:1:1 (byte 0): expected a column name of at most 4096 bytes, found more"),
        ("{", "g.json"),
        (#"{"dataset_data":{"column_names":["Date","Close"],"data":["#, "g.json"),
        // A valid CSV header, or header and rows, then garbage (zeros: a line that never ends).
        ("ticker,date,open\n", #"error: g.json:2:1 (byte 17): row 1, column 'ticker': expected text, not a control byte, found '\u{0}'"#),
        (
            "ticker,date,open\nA,2020-01-02,1\nA,2020-01-03,2\n",
            #"error: g.json:4:1 (byte 47): row 3, column 'ticker': expected text, not a control byte, found '\u{0}'"#
        ),
        (
            "Date,Open,Close\n2020-01-02,1,2\n",
            #"error: g.json:3:1 (byte 31): row 2, column 'Date': expected text, not a control byte, found '\u{0}'"#
        ),
    ])
    func aGigabyteOfGarbageIsRefusedWithinItsFirst64KiB(prefix: String, expected: String) throws {
        try Self.withGuardedGigabyte(Array(prefix.utf8)) { bytes in
            // The pre-count, as for any file (the CSV size limit lifted: it is counted too).
            #expect(QuoteImporter.countDataRows(bytes, largeCSV: .max) == nil)
            #expect(QuoteImporter.pieceLayout(bytes, source: "g.json", threads: 2, chunkSize: 1 << 20).map { _ in true } == nil)
            var message = ""
            do {
                _ = try QuoteDecoder.decode(bytes, source: "g.json")
                Issue.record("a gigabyte of garbage decoded")
            } catch {
                message = "error: \(error)"
            }
            #expect(message.hasPrefix(expected.hasPrefix("error:") ? expected : "error: " + expected), "\(message)")
        }
    }
}
