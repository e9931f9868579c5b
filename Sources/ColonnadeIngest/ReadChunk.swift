#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Colonnade
import DataLinkFormat

/// A buffer of bytes read from a stream (standard input), kept alive while a worker decodes it.
final class ReadChunk: @unchecked Sendable {
    // Safe to share: filled before it is handed to a worker, read-only afterwards.
    let base: UnsafeMutableRawPointer
    let capacity: Int
    /// Bytes in use: what the previous chunk left unused, then `newCount` bytes read.
    var count = 0
    /// Where the bytes read into this chunk start.
    var newStart = 0

    /// A chunk of `capacity` bytes for reading `source`.
    ///
    /// - Throws: `.decoding(.unreadable)` (out of memory) naming `source` when the bytes cannot be
    ///   allocated, as for a file too large to read (`QuoteImporter.withContents`).
    init(capacity: Int, source: String) throws(ResponseError) {
        var raw: UnsafeMutableRawPointer?
        guard posix_memalign(&raw, 64, Swift.max(capacity, 1)) == 0, let raw else {
            throw .decoding(
                .unreadable(path: source, reason: "out of memory: cannot allocate \(DecodeError.sizeText(capacity)) to read into"))
        }
        self.capacity = capacity
        base = raw
    }

    deinit { free(base) }

    var data: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }
    var newBytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base + newStart, count: count - newStart) }
}
