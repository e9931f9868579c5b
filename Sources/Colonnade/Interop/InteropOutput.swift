#if canImport(Glibc)
import Glibc
#endif

/// Where a writer puts its bytes: a file, a file descriptor (a pipe), or memory.
///
/// Small writes are buffered; large ones (a column buffer) go to `write(2)` straight from the
/// caller's memory. `position` counts every byte accepted so far.
public protocol InteropOutput: AnyObject {
    /// Bytes accepted so far.
    var position: Int { get }
    /// Appends `bytes`.
    func write(_ bytes: UnsafeRawBufferPointer) throws(InteropError)
    /// Says that about `length` bytes will follow, before the first is written (a file reserves
    /// its disk blocks in one go); a hint, never a promise.
    func reserve(_ length: Int) throws(InteropError)
}

extension InteropOutput {
    /// No reservation.
    public func reserve(_ length: Int) throws(InteropError) {}

    /// Appends `bytes`.
    func write(_ bytes: [UInt8]) throws(InteropError) {
        let failure: InteropError? = bytes.withUnsafeBytes { b in
            do throws(InteropError) { try write(b) } catch { return error }
            return nil
        }
        if let failure { throw failure }
    }

    /// Appends `count` zero bytes.
    func writeZeros(_ count: Int) throws(InteropError) {
        guard count > 0 else { return }
        try write([UInt8](repeating: 0, count: count))
    }

    /// Appends zero bytes until `position` is a multiple of `alignment`.
    func pad(to alignment: Int) throws(InteropError) {
        try writeZeros((alignment - position % alignment) % alignment)
    }
}

/// An output that keeps everything in memory (for tests and fuzzing).
public final class MemoryInteropOutput: InteropOutput {
    /// Everything written.
    public private(set) var bytes: [UInt8] = []
    /// An empty output.
    public init() {}
    public var position: Int { bytes.count }
    public func write(_ bytes: UnsafeRawBufferPointer) throws(InteropError) {
        self.bytes.append(contentsOf: bytes)
    }
}

/// An output to an open file descriptor, buffered in 1 MiB; the caller owns the descriptor.
///
/// Pieces of `directThreshold` bytes or more (column buffers) go to `write(2)` straight from the
/// caller's memory, so the only copy of a value is the kernel's into the page cache.
public final class DescriptorInteropOutput: InteropOutput {
    private let fd: Int32
    private let name: String
    private var buffer: UnsafeMutableRawPointer
    private let capacity: Int
    /// Pieces at least this long skip the buffer (a few hundred kilobytes of small pieces cost one
    /// copy more; a `write(2)` per 32 KiB costs far less than copying them).
    static let directThreshold = 32 << 10
    private var used = 0
    /// The file length reserved by `reserve(_:)`, 0 when nothing was.
    private var reserved = 0
    public private(set) var position = 0

    /// An output to `fd`; `name` names it in errors.
    ///
    /// - Throws: `InteropError.io` (`allocate`, ENOMEM) naming `name` when the buffer cannot be
    ///   allocated.
    public convenience init(fd: Int32, name: String) throws(InteropError) {
        try self.init(fd: fd, name: name, bufferSize: 1 << 20)
    }

    /// An output to `fd` with a buffer of `bufferSize` bytes (tests ask for one that cannot be
    /// allocated).
    init(fd: Int32, name: String, bufferSize: Int) throws(InteropError) {
        var raw: UnsafeMutableRawPointer?
        guard posix_memalign(&raw, 64, bufferSize) == 0, let raw else {
            throw .io(file: name, operation: "allocate", errno: ENOMEM)
        }
        self.fd = fd
        self.name = name
        self.buffer = raw
        self.capacity = bufferSize
    }

    deinit { free(buffer) }

    public func write(_ bytes: UnsafeRawBufferPointer) throws(InteropError) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        position += bytes.count
        if bytes.count < Self.directThreshold && used + bytes.count <= capacity {
            (buffer + used).copyMemory(from: base, byteCount: bytes.count)
            used += bytes.count
            return
        }
        try flush()
        if bytes.count >= Self.directThreshold {
            try Self.writeAll(fd, base, bytes.count, name: name)
        } else {
            buffer.copyMemory(from: base, byteCount: bytes.count)
            used = bytes.count
        }
    }

    /// Hands the buffered bytes to the descriptor; after a `reserve(_:)`, also cuts the file to
    /// the bytes written.
    public func flush() throws(InteropError) {
        if used > 0 { try Self.writeAll(fd, UnsafeRawPointer(buffer), used, name: name) }
        used = 0
        if reserved > position {
            if SystemCall.retryingOnInterrupt({ ftruncate(fd, off_t(position)) }) != 0 {
                throw .io(file: name, operation: "truncate", errno: errno)
            }
            reserved = 0
        }
    }

    /// Reserves about `length` bytes of disk for a regular file written from offset 0
    /// (`fallocate(2)`, which extends the file), so its blocks are allocated in one go rather than
    /// page by page as the writes arrive, and a full disk fails before the bulk of the bytes is
    /// copied. `flush()` cuts the file back to what was written, so an estimate above the real
    /// length is harmless; below it, the writes past it allocate as they go. Filesystems without
    /// `fallocate` (EOPNOTSUPP) and descriptors that are not regular files are left alone.
    /// - Throws: `InteropError.io` when the disk has no room for `length` bytes.
    public func reserve(_ length: Int) throws(InteropError) {
        #if os(Linux)
        var st = stat()
        guard length > 0, position == 0, used == 0, fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, st.st_size == 0 else { return }
        if SystemCall.retryingOnInterrupt({ linuxFallocate(fd, 0, 0, off_t(length)) }) != 0 {
            if errno == ENOSPC || errno == EFBIG || errno == EDQUOT { throw .io(file: name, operation: "write", errno: errno) }
            return
        }
        reserved = length
        #endif
    }

    /// Writes all of `count` bytes (`SystemCall.writeAll`).
    static func writeAll(_ fd: Int32, _ base: UnsafeRawPointer, _ count: Int, name: String) throws(InteropError) {
        let failure = SystemCall.writeAll(fd, base, count)
        if failure != 0 { throw .io(file: name, operation: "write", errno: failure) }
    }
}

/// `Array.withUnsafeBytes` for a body that throws `InteropError` (the standard one rethrows `any Error`).
func withInteropBytes<T, R>(_ array: [T], _ body: (UnsafeRawBufferPointer) throws(InteropError) -> R) throws(InteropError) -> R {
    let result: Result<R, InteropError> = array.withUnsafeBytes { b in
        do throws(InteropError) { return .success(try body(b)) } catch { return .failure(error) }
    }
    return try result.get()
}
