#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The bytes of a zip archive: a read-only mapping of a file, or a copy of an array. Never changes.
final class ZipStorage: @unchecked Sendable {
    // Safe to share: read-only for its whole life.
    let base: UnsafePointer<UInt8>
    let count: Int
    private let release: @Sendable (UnsafeMutableRawPointer, Int) -> Void
    /// The guarded mapping of a file, when mapped through one.
    private let mapping: GuardedFileMapping?

    init(bytes: [UInt8]) {
        let p = UnsafeMutablePointer<UInt8>.allocate(capacity: Swift.max(bytes.count, 1))
        p.initialize(repeating: 0, count: Swift.max(bytes.count, 1))
        bytes.withUnsafeBufferPointer { b in
            if let from = b.baseAddress { p.update(from: from, count: b.count) }
        }
        base = UnsafePointer(p)
        count = bytes.count
        release = { p, _ in p.deallocate() }
        mapping = nil
    }

    /// Takes `count` bytes at `base`, allocated by `malloc` (or `posix_memalign`), which it frees.
    init(owningMallocBytes base: UnsafeMutableRawPointer, count: Int) {
        self.base = UnsafePointer(base.assumingMemoryBound(to: UInt8.self))
        self.count = count
        release = { p, _ in free(p) }
        mapping = nil
    }

    /// Maps `path` read-only.
    init(mapping path: String, archive: String) throws(ZipError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .notAZip(archive: archive, detail: "cannot open: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .notAZip(archive: archive, detail: "cannot read: \(String(cString: strerror(errno)))") }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw .notAZip(archive: archive, detail: "not a regular file") }
        let size = Int(info.st_size)
        guard size > 0 else { throw .notAZip(archive: archive, detail: "the file is empty") }
        // Guarded, so that the file shrinking meanwhile is an error (`lostPages`), not SIGBUS.
        if let mapping = GuardedFileMapping(fileDescriptor: fd, count: size) {
            madvise(UnsafeMutableRawPointer(mutating: mapping.bytes.baseAddress), size, MADV_SEQUENTIAL)
            base = mapping.bytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
            count = size
            release = { _, _ in }  // the mapping unmaps itself
            self.mapping = mapping
            return
        }
        let p = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0)
        guard let p, p != MAP_FAILED else {
            throw .notAZip(archive: archive, detail: "cannot map: \(String(cString: strerror(errno)))")
        }
        madvise(p, size, MADV_SEQUENTIAL)
        base = UnsafePointer(p.assumingMemoryBound(to: UInt8.self))
        count = size
        release = { p, n in munmap(p, n) }
        mapping = nil
    }

    /// Whether the mapped file shrank while being read (pages past its end read as zeros).
    var lostPages: Bool { mapping?.lostPages ?? false }

    deinit { release(UnsafeMutableRawPointer(mutating: base), Swift.max(count, 1)) }

    // MARK: Little-endian reads (callers check bounds)

    @inline(__always) func getUInt16LE(at offset: Int) -> Int {
        Int(base[offset]) | Int(base[offset + 1]) << 8
    }

    @inline(__always) func getUInt32LE(at offset: Int) -> Int {
        getUInt16LE(at: offset) | getUInt16LE(at: offset + 2) << 16
    }

    @inline(__always) func getUInt64LE(at offset: Int) -> UInt64 {
        UInt64(getUInt32LE(at: offset)) | UInt64(getUInt32LE(at: offset + 4)) << 32
    }
}
