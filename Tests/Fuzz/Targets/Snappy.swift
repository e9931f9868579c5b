// fuzz-modules: Colonnade
//
// The Snappy decompressor Parquet pages go through (and the compressor the Parquet writer uses).
// The input is a Snappy block. Oracle: what decompresses (also into a buffer of exactly its
// length, without slack, the same bytes), compressed again and decompressed,
// gives the same bytes (with and without the expected length); the input itself, compressed and
// decompressed, comes back unchanged. An error's offset lies inside the input.
// `FUZZ_MAKE_SEEDS=dir` writes the seed corpus (the Snappy compressor's output for a few
// fixture-like inputs: text, numbers, runs, nothing) and exits.
@testable import Colonnade
import Foundation

@_cdecl("LLVMFuzzerInitialize")
public func initialize(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
) -> CInt {
    guard let dir = ProcessInfo.processInfo.environment["FUZZ_MAKE_SEEDS"] else { return 0 }
    let csv = Array("Date,Open,High,Low,Close,Volume\n2014-01-02,555.68,557.03,552.021,553.13,8.3981e+06\n".utf8)
    var doubles = [UInt8]()
    for i in 0 ..< 300 { withUnsafeBytes(of: 80.0 + Double(i % 17) / 4) { doubles += $0 } }
    let seeds: [(String, [UInt8])] = [
        ("empty", []), ("one", [7]), ("text", Array(repeating: csv, count: 12).flatMap { $0 }),
        ("doubles", doubles), ("run", [UInt8](repeating: 0x41, count: 5000)),
        ("bytes", (0 ..< 4000).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }),
    ]
    for (name, bytes) in seeds {
        let packed = bytes.withUnsafeBytes { Snappy.compress($0) }
        guard FileManager.default.createFile(atPath: dir + "/" + name, contents: Data(packed)) else {
            fatalError("cannot write \(dir)/\(name)")
        }
    }
    exit(0)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    do {
        let out = try Snappy.decompress(input, file: "fuzz", fileOffset: 0)
        let again = out.withUnsafeBytes { Snappy.compress($0) }
        let back = try again.withUnsafeBytes { try Snappy.decompress($0, file: "again", fileOffset: 0, expectedLength: out.count) }
        precondition(back == out, "decompress(compress(x)) != x for a decompressed x of \(out.count) bytes")
        // Into a buffer of exactly the length, no slack (the careful copies): the same bytes.
        let exact = UnsafeMutableRawBufferPointer.allocate(byteCount: Swift.max(1, out.count), alignment: 1)
        defer { exact.deallocate() }
        let view = UnsafeMutableRawBufferPointer(rebasing: exact[0 ..< out.count])
        try Snappy.decompress(input, file: "fuzz", fileOffset: 0, expectedLength: out.count, into: view, slack: 0)
        precondition(view.elementsEqual(out), "decompress into an exact buffer differs")
    } catch {
        if case InteropError.malformed(_, let offset, _) = error {
            precondition(offset >= 0 && offset <= size, "error offset \(offset) outside the input of \(size) bytes")
        }
        _ = "\(error)"
    }
    let packed = Snappy.compress(input)
    do {
        let back = try packed.withUnsafeBytes { try Snappy.decompress($0, file: "packed", fileOffset: 0, expectedLength: size) }
        precondition(back.elementsEqual(input), "decompress(compress(input)) != input")
    } catch {
        preconditionFailure("compressed input does not decompress: \(error)")
    }
    return 0
}
