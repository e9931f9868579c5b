#if canImport(Glibc)
import Glibc
#endif

/// A read-only, private memory mapping of a whole snapshot file. Columns loaded from the file are
/// views into it (`ColumnStorage(borrowing:byteCount:owner:)` with this object as the owner), so
/// it stays mapped while any of them is alive, and is unmapped when the last one goes.
///
/// The file is never rewritten in place by Colonnade (saves rename a new file over it), but
/// someone else may shrink it: the mapping is a `GuardedFileMapping` where one is available, so
/// pages past the new end read as zeros rather than raising SIGBUS, and `lostPages` says so
/// (`load` then fails instead of returning what it read).
final class SnapshotMapping: @unchecked Sendable {
    // Safe to share: the mapping is PROT_READ and never changes.
    let base: UnsafeRawPointer
    let size: Int
    private let guarded: GuardedFileMapping?

    /// Maps `size` bytes of `fd` read-only and private, guarded where it can be.
    init(fd: Int32, size: Int, file: String) throws(SnapshotError) {
        precondition(size > 0)
        if let guarded = GuardedFileMapping(fileDescriptor: fd, count: size) {
            self.base = guarded.bytes.baseAddress!
            self.size = size
            self.guarded = guarded
            return
        }
        let p = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0)
        guard let p, p != MAP_FAILED else { throw SnapshotError.system(file, "mmap", errno) }
        self.base = UnsafeRawPointer(p)
        self.size = size
        self.guarded = nil
    }

    /// Whether the file shrank while mapped and a page past its new end was read (as zeros).
    var lostPages: Bool { guarded?.lostPages ?? false }

    /// Maps every page up front (`MADV_POPULATE_READ`): much faster than faulting page by page
    /// when the whole file is about to be read, as verification does. Call it only once the
    /// layout is known to be sound (payloads packed up to the footer), so a hostile file cannot
    /// make it fault in a sparse hole. Best effort: an older kernel just faults page by page.
    func populate() {
        _ = madvise(UnsafeMutableRawPointer(mutating: base), size, 22 /* MADV_POPULATE_READ, Linux 5.14 */)
    }

    deinit {
        if guarded == nil { munmap(UnsafeMutableRawPointer(mutating: base), size) }
    }

    /// The whole file.
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: size) }
}
