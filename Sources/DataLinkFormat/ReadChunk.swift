/// A buffer of bytes read from a stream (standard input), kept alive while a worker decodes it.
final class ReadChunk: @unchecked Sendable {
    // Safe to share: filled before it is handed to a worker, read-only afterwards.
    let base: UnsafeMutableRawPointer
    let capacity: Int
    /// Bytes in use: what the previous chunk left unused, then `newCount` bytes read.
    var count = 0
    /// Where the bytes read into this chunk start.
    var newStart = 0

    init(capacity: Int) {
        self.capacity = capacity
        base = .allocate(byteCount: Swift.max(capacity, 1), alignment: 64)
    }

    deinit { base.deallocate() }

    var data: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }
    var newBytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base + newStart, count: count - newStart) }
}
