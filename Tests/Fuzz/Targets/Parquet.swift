// fuzz-modules: Colonnade
//
// The Parquet reader: magic, Thrift compact footer (schema, row groups, column chunks), page
// headers, PLAIN and dictionary pages v1/v2, RLE/bit-packed hybrid definition levels and indices,
// Snappy and uncompressed pages. The input is a Parquet file. What reads must be a well-formed
// table and survive what `import` does with it next (the shared `exerciseImported`).
@testable import Colonnade

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
    do {
        exerciseImported(try ParquetReader.read(bytes, file: "fuzz.parquet", ticker: "FUZZ"))
    } catch {
        _ = "\(error)"
    }
    return 0
}
