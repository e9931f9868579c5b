// fuzz-modules: Colonnade
//
// The Arrow IPC reader: the file format (magic, footer flatbuffer, record batches by block) and
// the stream format (continuation-prefixed messages), schemas, dictionaries, utf8/large/view
// strings, date32/64, timestamps, validity bitmaps, buffers and their bounds. The input is an
// Arrow file or stream. What reads must be a well-formed table and survive what `import` does
// with it next (the shared `exerciseImported`). Both the reader itself and the by-magic entry
// point `import` uses (`InteropReader.read`) run; both must agree.
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
    let direct: QuoteTable?
    do {
        direct = try ArrowIPCReader.read(bytes, file: "fuzz.arrow", ticker: "FUZZ")
    } catch {
        _ = "\(error)"
        direct = nil
    }
    if let table = direct {
        exerciseImported(table)
    }
    if InteropReader.format(of: bytes) != nil, InteropReader.format(of: bytes) != .parquet {
        let viaMagic = try? InteropReader.read(bytes, file: "fuzz.arrow", ticker: "FUZZ")
        precondition((viaMagic == nil) == (direct == nil), "InteropReader.read and ArrowIPCReader.read disagree")
    }
    return 0
}
