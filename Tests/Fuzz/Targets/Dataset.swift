// fuzz-modules: Colonnade
//
// Zips of Parquet and Arrow files read as a dataset (InteropReader.readZip: members found by
// name, Hive `key=value` directories in member paths percent-decoded and checked against each
// file's rows, a zip inside refused, every member's columns joined into one table), and the
// Hive key parser on its own. The input is a zip archive. What reads must be a well-formed table
// and survive what `import` does with it next (`exerciseImported`). Oracle for the key parser:
// a name's percent-decoding keeps every byte that is not a `%XX` escape, and never grows.
// Seeds: the zips of Tests/Fixtures/interop/datasets.
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
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    // The key parser, on the input's first line as a directory name.
    let name = String(decoding: bytes.prefix { $0 != 10 }.prefix(256), as: UTF8.self)
    if let (key, value) = HiveDataset.partitionKey(name) {
        precondition(key.utf8.count <= name.utf8.count && (value?.utf8.count ?? 0) <= name.utf8.count, "a decoded key grew: \(name)")
        if !name.contains("%") {
            precondition(key + "=" + (value ?? "__HIVE_DEFAULT_PARTITION__") == name, "\(name) → \(key)=\(value ?? "nil")")
        }
    }
    guard let archive = try? ZipArchive(bytes: bytes, name: "fuzz.zip") else { return 0 }
    var skipped: [InteropSkippedColumn] = []
    do {
        exerciseImported(try InteropReader.readZip(archive, path: "fuzz.zip", ticker: "FUZZ", strict: false, skipped: &skipped))
    } catch {
        _ = "\(error)"
    }
    return 0
}
