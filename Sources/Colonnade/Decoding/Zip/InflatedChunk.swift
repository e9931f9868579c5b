/// One piece of a zip member's uncompressed bytes, handed out by `ZipArchive.stream`.
///
/// The chunk owns its buffer (freed when the last reference goes), so a consumer may pass it to
/// another thread and keep reading it while later chunks are produced. Its bytes never change
/// once handed out.
///
///     bytes[0 ..< dataStart]        history the inflater needed (not for the consumer)
///     bytes[dataStart ..< count]    the consumer's bytes: what it kept from the previous chunk,
///                                   then new output
public final class InflatedChunk: @unchecked Sendable {
    // Safe to share: written only before it is handed out, read-only afterwards.
    /// The first byte of the buffer.
    public let base: UnsafeMutablePointer<UInt8>
    /// The buffer's size.
    public let capacity: Int
    /// Bytes in use.
    public internal(set) var count: Int
    /// Where the consumer's bytes start.
    public internal(set) var dataStart = 0
    /// Whether this is the member's last chunk.
    public internal(set) var isLast = false
    /// The offset of `base[dataStart]` in the member's uncompressed bytes.
    public internal(set) var memberOffset = 0

    init(capacity: Int) {
        self.capacity = capacity
        base = .allocate(capacity: capacity)
        count = 0
    }

    deinit { base.deallocate() }

    /// The consumer's bytes.
    public var data: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: base + dataStart, count: count - dataStart)
    }
}
