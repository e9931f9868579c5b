import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Raw memory behind a column or a bitmask: 64-byte aligned, padded to a multiple of 64 bytes.
///
/// Storage is either *owned* (allocated here, zero-filled, freed in `deinit`) or a *view* into
/// memory that another object owns — for example a memory-mapped snapshot file. A view keeps its
/// owner alive, so a mapping stays valid while any column that reads it is alive.
///
/// Kernels and the snapshot loader rely on the alignment and the padding: every buffer starts on
/// a 64-byte boundary and may be read in whole 64-byte lines up to `byteCapacity`.
public final class ColumnStorage: @unchecked Sendable {
    // Safe to share across threads: the memory is only mutated through `Column`/`Bitmask`,
    // which copy on write and check `isKnownUniquelyReferenced` first.

    /// The alignment of every buffer, in bytes.
    public static let alignment = 64

    @usableFromInline let base: UnsafeMutableRawPointer
    /// Usable bytes from `base`, a multiple of 64.
    public let byteCapacity: Int
    /// The object that owns borrowed memory, or nil when this storage owns it.
    public let owner: AnyObject?
    /// Whether owned memory came from `mmap` (freed with `munmap`) rather than the allocator.
    private let isMapped: Bool
    /// Whether the mapping goes back to `ReusedMappings` when freed (`init?(reusableByteCount:)`).
    private var isReusable = false

    /// Faults in the pages of `bytes` (starting on a page boundary) of an owned mapping for
    /// writing at once (`MADV_POPULATE_WRITE`, Linux 5.14), for a writer about to fill them: on
    /// the development VM that cleared fresh pages about 1.7× faster than the page faults of
    /// first touch during a copy (MEASUREMENTS.md, *Versions*). Does nothing for allocator
    /// memory, and where the kernel lacks the call the writes fault the pages in as before.
    package func populateForWriting(bytes: Range<Int>) {
        #if os(Linux)
        guard isMapped, owner == nil, !bytes.isEmpty, bytes.upperBound <= byteCapacity else { return }
        _ = madvise(base + bytes.lowerBound, bytes.count, 23 /* MADV_POPULATE_WRITE */)
        #endif
    }

    /// Owned buffers at least this large are anonymous mappings: the kernel hands out zeroed
    /// pages, so no `memset` pass writes them a second time before the column's own writes
    /// (a fresh import writes each value once into its final column; see ARCHITECTURE.md,
    /// Decoding).
    static let mappingThreshold = 1 << 20
    /// Size from which a sparsely written buffer is an anonymous mapping (16 pages).
    static let sparseMappingThreshold = 64 << 10

    /// Allocates zero-filled storage of at least `byteCount` bytes, rounded up to 64.
    ///
    /// `mapLargeBuffers: false` keeps a large buffer on the allocator: for short-lived buffers
    /// allocated per query (bitmasks), a fresh mapping costs an `mmap`, page faults on huge pages
    /// and an `munmap` every time — at 20 M rows that made Q3 (a few thousand rows touched) 8×
    /// slower than the `memset` it saved.
    ///
    /// Stops the process when the memory cannot be allocated: for sizes that come from input, use
    /// `init?(allocatingByteCount:mapLargeBuffers:)` and report the failure.
    public convenience init(byteCount: Int, mapLargeBuffers: Bool = true) {
        guard let storage = ColumnStorage.allocateZeroed(byteCount: byteCount, mapLargeBuffers: mapLargeBuffers) else {
            preconditionFailure("out of memory: cannot allocate \(byteCount) bytes")
        }
        self.init(owning: storage.base, byteCount: storage.capacity, isMapped: storage.isMapped)
    }

    /// Zero-filled storage of at least `byteCount` bytes, rounded up to 64, or nil when the memory
    /// cannot be allocated (or `byteCount` rounded up overflows): how buffers whose size comes
    /// from input are made, so that their callers can throw an out-of-memory error instead of
    /// stopping the process (see ARCHITECTURE.md, Modules: errors).
    public convenience init?(allocatingByteCount byteCount: Int, mapLargeBuffers: Bool = true) {
        guard let storage = ColumnStorage.allocateZeroed(byteCount: byteCount, mapLargeBuffers: mapLargeBuffers) else { return nil }
        self.init(owning: storage.base, byteCount: storage.capacity, isMapped: storage.isMapped)
    }

    /// Zero-filled storage of at least `byteCount` bytes, like `init?(allocatingByteCount:)`,
    /// whose mapping (when large) is kept when it is freed and handed to the next such storage of
    /// about its size, zeroed again by `memset` instead of faulted in afresh (see ARCHITECTURE.md,
    /// Interop: reused column memory). For the columns a file reader fills, which a program that
    /// reads files one after the other frees and allocates again at the same sizes; nil when the
    /// memory cannot be allocated.
    ///
    /// `overwritten: true` is the caller's promise to write every byte below `byteCount` before
    /// anything reads it (a reader that writes every row, a null as zeros, and throws the storage
    /// away when it fails): a kept mapping is then zeroed only from `byteCount` on (the padding),
    /// and its first `byteCount` bytes are whatever they were, so no pass writes the rows twice.
    package convenience init?(reusableByteCount byteCount: Int, overwritten: Bool = false) {
        guard byteCount >= 0, byteCount <= Int.max - ColumnStorage.alignment * 2 else { return nil }
        let capacity = ColumnStorage.paddedByteCount(byteCount)
        if capacity >= ColumnStorage.mappingThreshold {
            if let reused = ReusedMappings.take(capacity) {
                let kept = overwritten ? byteCount : 0
                (reused.base + kept).initializeMemory(as: UInt8.self, repeating: 0, count: reused.capacity - kept)
                self.init(owning: reused.base, byteCount: reused.capacity, isMapped: true)
            } else {
                guard let mapped = ColumnStorage.mapZeroedPages(capacity) else { return nil }
                self.init(owning: mapped, byteCount: capacity, isMapped: true)
            }
            isReusable = true
        } else {
            self.init(allocatingByteCount: byteCount)
        }
    }

    private init(owning base: UnsafeMutableRawPointer, byteCount: Int, isMapped: Bool) {
        self.base = base
        self.byteCapacity = byteCount
        self.owner = nil
        self.isMapped = isMapped
    }

    /// Zeroed memory for `byteCount` bytes padded to 64 (at least 64 from the allocator): an
    /// anonymous mapping when large and allowed, else `posix_memalign` and `memset`; nil when
    /// neither can allocate it.
    private static func allocateZeroed(
        byteCount: Int, mapLargeBuffers: Bool
    )
        -> (base: UnsafeMutableRawPointer, capacity: Int, isMapped: Bool)?
    {
        precondition(byteCount >= 0, "negative byte count")
        guard byteCount <= Int.max - alignment else { return nil }
        let capacity = paddedByteCount(byteCount)
        if mapLargeBuffers, capacity >= mappingThreshold, let mapped = mapZeroedPages(capacity) {
            return (mapped, capacity, true)
        }
        let allocated = Swift.max(capacity, alignment)
        var raw: UnsafeMutableRawPointer?
        guard posix_memalign(&raw, alignment, allocated) == 0, let raw else { return nil }
        raw.initializeMemory(as: UInt8.self, repeating: 0, count: allocated)
        return (raw, capacity, false)
    }

    /// Zeroed anonymous pages (page-aligned, so 64-byte aligned), with transparent huge pages
    /// asked for on Linux unless `hugePages` is false; nil when the mapping fails (the caller
    /// falls back to the allocator).
    private static func mapZeroedPages(_ byteCount: Int, hugePages: Bool = true) -> UnsafeMutableRawPointer? {
        let pointer = mmap(nil, byteCount, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        guard let pointer, pointer != MAP_FAILED else { return nil }
        #if os(Linux)
        if hugePages { _ = madvise(pointer, byteCount, 14 /* MADV_HUGEPAGE */) }
        #endif
        return pointer
    }

    /// Zero-filled storage of at least `byteCount` bytes for a buffer that will be written in a
    /// few places only (an as-of screen's mask: at most one bit per ticker): when large, an
    /// anonymous mapping of small pages and no `memset`, so only the pages written are ever given
    /// memory and reading the rest maps the shared zero page. A fresh page costs far more than its
    /// size suggests on a machine that hands memory back to its host (the first memset of fresh
    /// memory ran at 1.1 GB/s here, see ARCHITECTURE.md, Bitmasks): zeroing a 20 M-row mask took
    /// about 2.3 ms of a 3 ms `--on latest` query. Mapped from `sparseMappingThreshold` on, not
    /// `mappingThreshold`: the allocator hands a 5 M-row mask (625 KB) fresh pages too, and
    /// zeroing them was a quarter of a 0.45 ms `--on latest` query at that size.
    package convenience init(sparselyWrittenByteCount byteCount: Int) {
        let capacity = ColumnStorage.paddedByteCount(byteCount)
        if capacity >= ColumnStorage.sparseMappingThreshold,
            let mapped = ColumnStorage.mapZeroedPages(capacity, hugePages: false)
        {
            self.init(owning: mapped, byteCount: capacity, isMapped: true)
        } else {
            self.init(byteCount: byteCount, mapLargeBuffers: false)
        }
    }

    /// Takes ownership of an anonymous mapping of `byteCount` bytes at `base` (page-aligned, so
    /// 64-byte aligned), unmapped in `deinit`: how `ColumnAssembler` hands over columns it filled
    /// in place.
    package init(adoptingMapping base: UnsafeMutableRawPointer, byteCount: Int) {
        precondition(Int(bitPattern: base) % ColumnStorage.alignment == 0, "mapping is not 64-byte aligned")
        precondition(byteCount % ColumnStorage.alignment == 0, "mapping length is not padded to 64 bytes")
        self.base = base
        self.byteCapacity = byteCount
        self.owner = nil
        self.isMapped = true
    }

    /// A view of `byteCount` bytes at `base`, kept alive by `owner`.
    ///
    /// - Precondition: `base` is 64-byte aligned and `byteCount` is a multiple of 64 (the snapshot
    ///   format guarantees both; the loader validates them before making a view).
    public init(borrowing base: UnsafeRawPointer, byteCount: Int, owner: AnyObject) {
        precondition(Int(bitPattern: base) % ColumnStorage.alignment == 0, "view is not 64-byte aligned")
        precondition(byteCount % ColumnStorage.alignment == 0, "view length is not padded to 64 bytes")
        self.base = UnsafeMutableRawPointer(mutating: base)
        self.byteCapacity = byteCount
        self.owner = owner
        self.isMapped = false
    }

    deinit {
        if owner != nil { return }
        if isReusable && ReusedMappings.keep(base, capacity: byteCapacity) { return }
        if isMapped { munmap(base, byteCapacity) } else { free(base) }
    }

    /// Whether this storage is a view into memory owned by another object (never written to).
    @inlinable public var isView: Bool { owner != nil }

    /// `byteCount` rounded up to a multiple of 64.
    @inlinable public static func paddedByteCount(_ byteCount: Int) -> Int {
        (byteCount + alignment - 1) & ~(alignment - 1)
    }

    /// A new owned copy with room for `byteCount` bytes holding the first `usedBytes` of this one.
    func copy(usedBytes: Int, byteCount: Int) -> ColumnStorage {
        let fresh = ColumnStorage(byteCount: Swift.max(byteCount, usedBytes))
        fresh.base.copyMemory(from: base, byteCount: usedBytes)
        return fresh
    }
}

/// Mappings of freed reusable column storages (`ColumnStorage.init?(reusableByteCount:)`), kept up
/// to `limit` bytes in all. A fresh anonymous page costs a fault and the kernel's zeroing (on this
/// project's virtual machines about 1 GB/s, see ARCHITECTURE.md), a kept one only a `memset`: how
/// an allocator such as Polars' keeps the memory of one file's columns for the next file's.
///
/// A kept mapping is given back to the kernel lazily (`MADV_FREE` on Linux): while it is kept,
/// the kernel may take its pages whenever it needs memory (they then read as zeros, and a write
/// faults in a fresh page), and as long as it does not, a write reuses them without a fault. So
/// the memory a program no longer uses is not held from the rest of the machine until it exits.
enum ReusedMappings {
    /// A quarter of the machine's memory (1 GiB where it cannot be read).
    static let limit: Int = {
        let pages = sysconf(Int32(_SC_PHYS_PAGES)), size = sysconf(Int32(_SC_PAGESIZE))
        return pages > 0 && size > 0 ? pages * size / 4 : 1 << 30
    }()

    /// Addresses (as integers) and sizes of the kept mappings, and their total.
    private struct Kept {
        var mappings: [(address: Int, capacity: Int)] = []
        var bytes = 0
    }

    private static let kept = Mutex(Kept())

    /// Takes the smallest kept mapping of `capacity` bytes or at most an eighth more, if any (its
    /// content is whatever its last storage left).
    static func take(_ capacity: Int) -> (base: UnsafeMutableRawPointer, capacity: Int)? {
        let found = kept.withLock { kept -> (address: Int, capacity: Int)? in
            var best: Int?
            for (i, m) in kept.mappings.enumerated() where m.capacity >= capacity && m.capacity - capacity <= capacity / 8 {
                if best.map({ m.capacity < kept.mappings[$0].capacity }) ?? true { best = i }
            }
            guard let best else { return nil }
            let m = kept.mappings.remove(at: best)
            kept.bytes -= m.capacity
            return m
        }
        guard let found, let base = UnsafeMutableRawPointer(bitPattern: found.address) else { return nil }
        return (base, found.capacity)
    }

    /// How many kept mappings have exactly `capacity` bytes (for tests: whether a reader took them).
    static func keptCount(capacity: Int) -> Int {
        kept.withLock { kept in kept.mappings.count { $0.capacity == capacity } }
    }

    /// Keeps the mapping `base` of `capacity` bytes when the total stays within `limit`.
    /// - Returns: whether it was kept (else the caller unmaps it).
    static func keep(_ base: UnsafeMutableRawPointer, capacity: Int) -> Bool {
        // A mapping past the limit goes back to the caller to unmap: no use telling the kernel
        // about its pages first. (Checked again below: another thread may keep one meanwhile.)
        guard kept.withLock({ $0.bytes + capacity <= limit }) else { return false }
        #if os(Linux)
        // Before it is shared: no other storage may take it while the kernel is told.
        _ = madvise(base, capacity, 8 /* MADV_FREE */)
        #endif
        let isKept = kept.withLock { kept in
            guard kept.bytes + capacity <= limit else { return false }
            kept.mappings.append((Int(bitPattern: base), capacity))
            kept.bytes += capacity
            return true
        }
        return isKept
    }
}
