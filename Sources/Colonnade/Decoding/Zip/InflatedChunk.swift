/// One piece of a zip member's uncompressed bytes, handed out by `ZipArchive.stream`.
///
/// The chunk owns its buffer (given back to its stream's pool, or freed, when the last reference
/// goes), so a consumer may pass it to another thread and keep reading it while later chunks are
/// produced. Its bytes never change once handed out.
///
///     bytes[0 ..< dataStart]          history the inflater needed (not for the consumer)
///     bytes[dataStart ..< newStart]   what the consumer kept from the previous chunk
///     bytes[newStart ..< count]       new output: the member's bytes at memberOffset + (newStart - dataStart)
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
    /// Where the bytes this chunk adds to the member start (after what the consumer kept).
    public internal(set) var newStart = 0
    /// Whether this is the member's last chunk.
    public internal(set) var isLast = false
    /// The offset of `base[dataStart]` in the member's uncompressed bytes.
    public internal(set) var memberOffset = 0
    private let pool: InflatedChunkPool?
    /// The allocation's size (at least `capacity`; a pooled buffer may be larger).
    private let allocated: Int

    init(capacity: Int, pool: InflatedChunkPool? = nil) {
        self.pool = pool
        self.capacity = capacity
        if let pool, let reused = pool.take(capacity: capacity) {
            base = reused.base
            allocated = reused.capacity
        } else {
            allocated = Swift.max(capacity, pool?.bufferSize ?? 0)
            base = .allocate(capacity: allocated)
        }
        count = 0
    }

    deinit {
        if let pool { pool.give(base, capacity: allocated) } else { base.deallocate() }
    }

    /// The consumer's bytes.
    public var data: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: base + dataStart, count: count - dataStart)
    }

    /// The bytes this chunk adds to the member (each member byte is new in exactly one chunk).
    public var newBytes: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: base + newStart, count: count - newStart)
    }
}
