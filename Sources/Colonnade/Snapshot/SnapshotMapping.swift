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

    /// Maps `size` bytes of `fd` with `mmap(PROT_READ, MAP_PRIVATE)`; with `populate`, the kernel
    /// maps every page up front (`MAP_POPULATE`: much faster than faulting page by page when the
    /// whole file is about to be read, as verification does).
    init(fd: Int32, size: Int, populate: Bool, file: String) throws(SnapshotError) {
        precondition(size > 0)
        let p = mmap(nil, size, PROT_READ, MAP_PRIVATE | (populate ? MAP_POPULATE : 0), fd, 0)
        guard let p, p != MAP_FAILED else { throw SnapshotError.system(file, "mmap", errno) }
        self.base = UnsafeRawPointer(p)
        self.size = size
    }

    deinit {
        munmap(UnsafeMutableRawPointer(mutating: base), size)
    }

    /// The whole file.
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: size) }
}
