import Foundation

/// Zstandard decompression (RFC 8878), written from the specification
/// (https://github.com/facebook/zstd/blob/dev/doc/zstd_compression_format.md).
///
/// Reads one or more concatenated frames and skippable frames: raw, RLE and compressed blocks,
/// Huffman literals (1 and 4 streams, tree descriptions with FSE-compressed or direct weights,
/// and the previous block's tree), sequences in predefined, RLE, FSE-compressed and repeat modes,
/// the three repeat offsets, and the content checksum (checked when a frame has one). A frame's
/// declared content size must match what its blocks decode to.
///
/// Refused, with a `ZstdError` naming the byte: a frame that names a dictionary, a window larger
/// than `maximumWindowSize`, output larger than the caller's limit (checked before it is written,
/// so a small bomb costs bounded work), and anything malformed or truncated. Work is linear in
/// the input plus the output.
///
/// ```swift
/// let bytes = try data.withUnsafeBytes { try Zstd.decompress($0, maximumOutputSize: 1 << 30) }
/// ```
public enum Zstd {
    /// The largest window a frame may declare: 128 MiB (`zstd --long=27`, the reference
    /// decoder's default limit). A single-segment frame's window is its content size.
    public static let maximumWindowSize = 1 << 27

    /// Decompresses every frame of `input`.
    ///
    /// - Parameters:
    ///   - input: one or more Zstandard frames and skippable frames, back to back.
    ///   - maximumOutputSize: the most bytes the result may have; more is `tooLarge`.
    ///   - expectedSize: when given, the exact size of the result (more is `tooLarge`, fewer is
    ///     `sizeMismatch`), and the size the output is allocated with.
    /// - Returns: the decompressed bytes.
    /// - Throws: `ZstdError`.
    /// - Complexity: O(input + output).
    public static func decompress(
        _ input: UnsafeRawBufferPointer, maximumOutputSize: Int, expectedSize: Int? = nil
    ) throws(ZstdError) -> [UInt8] {
        let limit = max(0, min(maximumOutputSize, expectedSize ?? Int.max))
        if let expectedSize, expectedSize > 0, expectedSize <= limit {
            // The size is known: decode straight into the array's storage.
            var failure: ZstdError?
            let bytes = [UInt8](unsafeUninitializedCapacity: expectedSize) { buffer, initialized in
                do throws(ZstdError) {
                    initialized = try decompress(input, into: UnsafeMutableRawBufferPointer(buffer))
                } catch {
                    failure = error
                    initialized = 0
                }
            }
            if let failure { throw failure }
            guard bytes.count == expectedSize else { throw .sizeMismatch(expected: expectedSize, actual: bytes.count) }
            return bytes
        }
        var output = ZstdOutputBuffer(limit: limit, initialCapacity: expectedSize ?? 0)
        defer { output.release() }
        try decode(input, into: &output)
        if let expectedSize, output.count != expectedSize {
            throw .sizeMismatch(expected: expectedSize, actual: output.count)
        }
        return output.array()
    }

    /// Decompresses every frame of `input` into `destination` (for instance a Parquet page of
    /// known uncompressed size).
    ///
    /// - Returns: the number of bytes written at the start of `destination`.
    /// - Throws: `tooLarge` when the content does not fit, and every other `ZstdError`.
    /// - Complexity: O(input + output).
    public static func decompress(
        _ input: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer
    ) throws(ZstdError) -> Int {
        guard destination.count > 0 else {
            // A real (never written) address, so the decoder needs no case for a missing one.
            var spare: UInt8 = 0
            return try withUnsafeMutableBytes(of: &spare) { (spare) throws(ZstdError) -> Int in
                var output = ZstdOutputBuffer(destination: UnsafeMutableRawBufferPointer(rebasing: spare[0 ..< 0]))
                try decode(input, into: &output)
                return output.count
            }
        }
        var output = ZstdOutputBuffer(destination: destination)
        try decode(input, into: &output)
        return output.count
    }

    /// Decompresses every frame of `input` with every sequence through the checked path (no fast
    /// loop): the slow reference tests compare the fast loop with.
    static func decompressCheckedOnly(_ input: UnsafeRawBufferPointer, maximumOutputSize: Int) throws(ZstdError) -> [UInt8] {
        var output = ZstdOutputBuffer(limit: max(0, maximumOutputSize), initialCapacity: 0)
        defer { output.release() }
        try decode(input, into: &output, usesFastLoop: false)
        return output.array()
    }

    private static func decode(
        _ input: UnsafeRawBufferPointer, into output: inout ZstdOutputBuffer, usesFastLoop: Bool = true
    ) throws(ZstdError) {
        guard let base = input.baseAddress, input.count > 0 else { throw .truncated(offset: 0, needed: 4) }
        var decoder = ZstdDecoder(base: base, count: input.count)
        decoder.usesFastLoop = usesFastLoop
        defer { decoder.release() }
        var position = 0
        while position < input.count {
            position = try decoder.decodeFrameOrSkip(at: position, into: &output)
        }
    }
}
