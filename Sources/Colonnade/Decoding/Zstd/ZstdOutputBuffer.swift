import Foundation

/// Where decompressed bytes go: memory the decoder owns and grows up to a limit, or a buffer
/// the caller lends. Grows only between blocks, so pointers taken inside a block stay valid.
struct ZstdOutputBuffer {
    /// Bytes past `capacity` that may be written (never read back as content), so copies may
    /// move whole 8- and 16-byte words. Zero for a caller's buffer.
    static let slack = 32

    private(set) var base: UnsafeMutablePointer<UInt8>?
    /// Bytes of content.
    var count = 0
    /// Bytes of content the memory can hold now.
    private(set) var capacity = 0
    /// Bytes that may be written (content and slack).
    private(set) var writableEnd = 0
    /// The most content bytes allowed.
    let limit: Int
    private let owned: Bool

    /// Memory the decoder owns, first sized for `initialCapacity` bytes.
    init(limit: Int, initialCapacity: Int) {
        self.limit = limit
        owned = true
        reserve(total: min(limit, initialCapacity))
    }

    /// The caller's buffer.
    init(destination: UnsafeMutableRawBufferPointer) {
        base = destination.baseAddress?.assumingMemoryBound(to: UInt8.self)
        limit = destination.count
        capacity = destination.count
        writableEnd = destination.count
        owned = false
    }

    /// Makes room for `total` bytes of content (at most `limit`), growing geometrically.
    mutating func reserve(total: Int) {
        let target = min(total, limit)
        guard owned, target > capacity || base == nil else { return }
        let grown = capacity > limit / 2 ? limit : max(target, capacity * 2)
        let newCapacity = max(target, min(grown, limit))
        let bytes = newCapacity + Self.slack
        guard let memory = realloc(base, bytes) else { preconditionFailure("out of memory for \(bytes) bytes") }
        base = memory.assumingMemoryBound(to: UInt8.self)
        capacity = newCapacity
        writableEnd = bytes
    }

    /// The content as an array.
    func array() -> [UInt8] {
        guard let base, count > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: base, count: count))
    }

    /// Frees owned memory.
    mutating func release() {
        if owned, let base { free(base) }
        base = nil
    }
}
