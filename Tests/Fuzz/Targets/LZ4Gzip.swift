// fuzz-modules: Colonnade
//
// The LZ4 (frame, raw block, Hadoop framing) and gzip decoders Parquet pages and Arrow IPC bodies
// go through. Byte 0 picks the decoder (0: LZ4 frame, 1: raw block, 2: Hadoop, 3: gzip), bytes
// 1–2 an output bound (little-endian, in bytes × 16); the rest is the compressed input. Oracle:
// an error's offset lies inside the input; a decode under the bound equals the decode under a
// bound of 1 MiB (the bound only cuts, never changes, what comes out), and a raw block that
// decodes to n bytes decodes again with exactly n expected; no output exceeds its bound. Seeds
// in Tests/Fuzz/Corpus/LZ4Gzip were made by the `lz4` and `gzip` tools (SOURCES in its README).
@testable import Colonnade
import Foundation

func decode(_ kind: UInt8, _ input: UnsafeRawBufferPointer, bound: Int) -> Result<[UInt8], CodecError> {
    Result { () throws(CodecError) in
        switch kind % 4 {
        case 0: return try LZ4.decompressFrame(input, maximumOutputSize: bound)
        case 1: return try LZ4.decompressBlock(input, expectedSize: bound)
        case 2: return try LZ4.decompressHadoop(input, expectedSize: bound)
        default: return try Gzip.decompress(input, maximumOutputSize: bound)
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 3 else { return 0 }
    let kind = data[0]
    let bound = (Int(data[1]) | Int(data[2]) << 8) * 16
    let input = UnsafeRawBufferPointer(start: data + 3, count: size - 3)
    let small = decode(kind, input, bound: bound)
    switch small {
    case .success(let out):
        precondition(out.count <= bound, "\(out.count) bytes out under a bound of \(bound)")
        if kind % 4 == 0 || kind % 4 == 3 {
            guard case .success(let big) = decode(kind, input, bound: 1 << 20) else {
                preconditionFailure("decodes under \(bound) but not 1 MiB")
            }
            precondition(big == out, "the bound changed the output")
        }
    case .failure(let error):
        if let offset = error.offset { precondition(offset >= 0 && offset <= input.count, "offset \(offset) outside \(input.count) bytes") }
        _ = error.description
    }
    // A raw block that decodes to some size under the frame-free decoder decodes to it exactly.
    if kind % 4 == 1, case .failure(.sizeMismatch(_, _, let actual)) = small, actual > 0, actual <= 1 << 20, actual != bound + 1 {
        if case .success(let out) = decode(1, input, bound: actual) { precondition(out.count == actual) }
    }
    return 0
}
