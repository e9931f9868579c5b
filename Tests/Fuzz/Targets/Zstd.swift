// fuzz-modules: Colonnade
//
// The Zstandard decoder (RFC 8878) Parquet pages and Arrow IPC bodies will go through. The input
// is one or more frames. Oracle: decoding with an 8 MiB maximum gives bytes B or an error E;
// then decoding with the maximum exactly B's size gives B again, one byte less is `tooLarge`,
// decoding into a caller's buffer of B's size gives B, and expecting B's size gives B; after an
// error, a smaller maximum fails too (with E or `tooLarge`, never bytes). An error's offset lies
// inside the input. Every sequence through the checked path alone (no fast loop,
// `Zstd.decompressCheckedOnly`) gives the same B or E. Seeds: frames made by the `zstd` tool (Tests/Fuzz/Corpus/Zstd, see
// docs/FUZZING.md), never generated here.
@testable import Colonnade

let cap = 8 << 20

func decode(_ input: UnsafeRawBufferPointer, maximum: Int, expected: Int? = nil) -> Result<[UInt8], ZstdError> {
    let result = Result { () throws(ZstdError) -> [UInt8] in try Zstd.decompress(input, maximumOutputSize: maximum, expectedSize: expected)
    }
    if case .failure(let error) = result {
        _ = "\(error)"
        if let offset = error.offset {
            precondition(offset >= 0 && offset <= input.count, "error offset \(offset) outside the input of \(input.count) bytes: \(error)")
        }
    }
    return result
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    let first = decode(input, maximum: cap)
    let checked = Result { () throws(ZstdError) -> [UInt8] in try Zstd.decompressCheckedOnly(input, maximumOutputSize: cap) }
    precondition(checked == first, "the checked path alone disagrees with the fast loop: \(checked) against \(first)")
    switch first {
    case .success(let bytes):
        guard case .success(let again) = decode(input, maximum: bytes.count), again == bytes else {
            preconditionFailure("a maximum of exactly \(bytes.count) bytes does not give the same bytes")
        }
        guard case .success(let expected) = decode(input, maximum: cap, expected: bytes.count), expected == bytes else {
            preconditionFailure("expecting \(bytes.count) bytes does not give the same bytes")
        }
        if bytes.count > 0 {
            guard case .failure(.tooLarge) = decode(input, maximum: bytes.count - 1) else {
                preconditionFailure("a maximum of \(bytes.count - 1) bytes is not refused as too large")
            }
        }
        var buffer = [UInt8](repeating: 0, count: bytes.count)
        let written = buffer.withUnsafeMutableBytes { destination in
            Result { () throws(ZstdError) -> Int in try Zstd.decompress(input, into: destination) }
        }
        guard case .success(let count) = written, count == bytes.count, buffer == bytes else {
            preconditionFailure("decoding into a buffer of \(bytes.count) bytes does not give the same bytes: \(written)")
        }
    case .failure(let error):
        let smaller = decode(input, maximum: size % 4096)
        switch smaller {
        case .success(let bytes):
            preconditionFailure("fails with an 8 MiB maximum (\(error)) but gives \(bytes.count) bytes with a smaller one")
        case .failure(let other):
            if case .tooLarge = other { break }
            if case .tooLarge = error { preconditionFailure("too large for 8 MiB but \(other) for \(size % 4096) bytes") }
            precondition(other == error, "a different error with a smaller maximum: \(error) then \(other)")
        }
    }
    return 0
}
