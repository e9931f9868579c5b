import Synchronization

/// Buffers of finished chunks, kept for the next chunks of the same stream so they are not
/// allocated (and their pages faulted in and zeroed) again for every chunk.
///
/// A chunk gives its buffer back when its last reference goes, on whatever thread that is; the
/// pool keeps at most `keep` of them and frees the rest, and frees what it holds when it goes.
final class InflatedChunkPool: Sendable {
    private struct Buffer: @unchecked Sendable {
        // Safe: owned by the pool while in `free`; handed to exactly one chunk by `take`.
        let base: UnsafeMutablePointer<UInt8>
        let capacity: Int
    }

    private let free = Mutex<[Buffer]>([])
    private let keep: Int
    /// The size of the buffers the pool hands out (larger requests get larger buffers).
    let bufferSize: Int

    init(keep: Int, bufferSize: Int) {
        self.keep = keep
        self.bufferSize = bufferSize
    }

    deinit {
        free.withLock { buffers in
            for b in buffers { b.base.deallocate() }
            buffers.removeAll()
        }
    }

    /// A kept buffer of at least `capacity` bytes, or nil.
    func take(capacity: Int) -> (base: UnsafeMutablePointer<UInt8>, capacity: Int)? {
        free.withLock { buffers in
            guard let i = buffers.firstIndex(where: { $0.capacity >= capacity }) else { return nil }
            let b = buffers.remove(at: i)
            return (b.base, b.capacity)
        }
    }

    /// Takes back a chunk's buffer (kept, or freed when `keep` are already kept).
    func give(_ base: UnsafeMutablePointer<UInt8>, capacity: Int) {
        let kept = free.withLock { buffers in
            guard buffers.count < keep else { return false }
            buffers.append(Buffer(base: base, capacity: capacity))
            return true
        }
        if !kept { base.deallocate() }
    }
}
