// fuzz-modules: Colonnade
//
// The Zstandard and LZ4 compressors (Sources/Colonnade/Encoding) on any input. The first byte picks
// the zstd level (1-19); the rest is the data. Oracle: our decoders give back exactly the data
// (zstd with the declared size, LZ4 blocks and frames too), and a zstd frame is never larger than
// the data plus the fixed overhead of raw blocks (header, 3 bytes per 128 KiB block, checksum).
@testable import Colonnade

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let level = Int(data[0]) % 19 + 1
    let input = UnsafeRawBufferPointer(start: data + 1, count: size - 1)
    let frame = ZstdCompressor.compress(input, level: level)
    precondition(
        frame.count <= input.count + 18 + 3 * (input.count / (128 << 10) + 1), "a frame of \(frame.count) bytes for \(input.count)")
    let back = frame.withUnsafeBytes { f in
        Result { () throws(ZstdError) -> [UInt8] in try Zstd.decompress(f, maximumOutputSize: input.count, expectedSize: input.count) }
    }
    guard case .success(let bytes) = back, bytes.elementsEqual(input) else {
        preconditionFailure("level \(level): the zstd frame of \(input.count) bytes does not decode to them: \(back)")
    }
    let block = LZ4Compressor.compressBlock(input)
    let fromBlock = block.withUnsafeBytes { try? LZ4.decompressBlock($0, expectedSize: input.count) }
    precondition(fromBlock.map { $0.elementsEqual(input) } == true, "the LZ4 block does not decode to its input")
    let lz4Frame = LZ4Compressor.compressFrame(input)
    let fromFrame = lz4Frame.withUnsafeBytes { try? LZ4.decompressFrame($0, maximumOutputSize: input.count, expectedSize: input.count) }
    precondition(fromFrame.map { $0.elementsEqual(input) } == true, "the LZ4 frame does not decode to its input")
    return 0
}
