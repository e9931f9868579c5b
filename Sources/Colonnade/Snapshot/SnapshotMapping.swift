#if canImport(Glibc)
import Glibc
#endif

/// A read-only, private memory mapping of a whole snapshot file. Columns loaded from the file are
/// views into it (`ColumnStorage(borrowing:byteCount:owner:)` with this object as the owner), so
/// it stays mapped while any of them is alive, and is unmapped when the last one goes.
final class SnapshotMapping: @unchecked Sendable {
    // Safe to share: the mapping is PROT_READ and never changes; the file it maps is never
    // rewritten in place by Colonnade (saves rename a new file over it).
    let base: UnsafeRawPointer
    let size: Int

    /// Maps `size` bytes of `fd` with `mmap(PROT_READ, MAP_PRIVATE)`.
    init(fd: Int32, size: Int, file: String) throws(SnapshotError) {
        precondition(size > 0)
        let p = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0)
        guard let p, p != MAP_FAILED else { throw SnapshotError.system(file, "mmap", errno) }
        self.base = UnsafeRawPointer(p)
        self.size = size
    }

    /// Maps every page up front (`MADV_POPULATE_READ`): much faster than faulting page by page
    /// when the whole file is about to be read, as verification does. Call it only once the
    /// layout is known to be sound (payloads packed up to the footer), so a hostile file cannot
    /// make it fault in a sparse hole. Best effort: an older kernel just faults page by page.
    func populate() {
        _ = madvise(UnsafeMutableRawPointer(mutating: base), size, 22 /* MADV_POPULATE_READ, Linux 5.14 */)
    }

    deinit {
        munmap(UnsafeMutableRawPointer(mutating: base), size)
    }

    /// The whole file.
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: size) }
}
