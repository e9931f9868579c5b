// fuzz-modules: Colonnade DataLinkFormat
//
// The JSON response decoder (dataset_data, dataset, legacy v1, datatable, error bodies): the input
// is a response body; inputs that do not start with `{` (after a BOM and blanks) are left to the
// CSV target. What decodes must be a well-formed table (COLONNADE_INTERNAL_CHECKS: rows tiled by
// ticker, dates strictly ascending per ticker), and must survive what `import` does with it next:
// upsert into an existing table, block summaries, a query.
@testable import Colonnade
import DataLinkFormat

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
    guard start < size, data[start] == UInt8(ascii: "{") else { return -1 }  // -1: not added to the corpus
    exercise(bytes)
    return 0
}

/// Decodes `bytes`, then puts the table through what `import` does (Support/Harness.swift).
func exercise(_ bytes: UnsafeRawBufferPointer) {
    do {
        let response = try QuoteDecoder.decode(bytes, fallbackTicker: "FUZZ", source: "fuzz.json")
        exerciseImported(response.table)
    } catch {
        _ = error.description
    }
}
