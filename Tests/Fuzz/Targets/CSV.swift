// fuzz-modules: Colonnade DataLinkFormat ColonnadeIngest
//
// The CSV response decoder (time-series CSV, datatable CSV, `code,message` error bodies): the input
// is a response body; inputs that start with `{`, `[` or `<` (after a BOM and blanks) are left to
// the JSON target. What decodes must be a well-formed table (COLONNADE_INTERNAL_CHECKS: rows tiled by
// ticker, dates strictly ascending per ticker), and must survive what `import` does with it next:
// upsert into an existing table, block summaries, a query. Oracle for the one-large-CSV import's
// count: when the cutting pass finds the lines plain (`CSVChunker.Survey.plainLines`), its line
// count is `countCSVRows`' count over the same cuts, and the decoder's row count when it decodes.
@testable import Colonnade
@testable import DataLinkFormat
@testable import ColonnadeIngest

// LeakSanitizer: see Support/Harness.swift (`buildOnce`).
@_cdecl("LLVMFuzzerInitialize")
public func initialize(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
) -> CInt {
    _ = buildOnce { importBase.rowCount }
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    var start = 0
    if size >= 3, data[0] == 0xEF, data[1] == 0xBB, data[2] == 0xBF { start = 3 }
    while start < size, [0x20, 0x0A, 0x0D, 0x09].contains(data[start]) { start += 1 }
    guard start < size, !"{[<".utf8.contains(data[start]) else { return -1 }  // -1: not added to the corpus
    exercise(bytes)
    return 0
}

/// Decodes `bytes`, then puts the table through what `import` does (Support/Harness.swift).
func exercise(_ bytes: UnsafeRawBufferPointer) {
    var plainLines: Int?
    if let (input, _, survey) = QuoteImporter.pieceLayout(bytes, source: "fuzz.csv", threads: 1, chunkSize: 64) {
        // A survey is made only of lines without control bytes, so the count is one too.
        guard let counted = QuoteImporter.countCSVRows(input.base, cuts: survey.cuts, end: input.count, threads: 1) else {
            fatalError("a survey but no countCSVRows")
        }
        if let plain = survey.plainLines, plain != counted { fatalError("plain lines \(plain), countCSVRows \(counted)") }
        plainLines = survey.plainLines
    }
    do {
        let response = try QuoteDecoder.decode(bytes, fallbackTicker: "FUZZ", source: "fuzz.csv")
        if let plainLines, response.table.rowCount != plainLines {
            fatalError("plain lines \(plainLines), decoded rows \(response.table.rowCount)")
        }
        exerciseImported(response.table)
    } catch {
        _ = error.description
    }
}
