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
}

extension InteropOutput {
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
public final class DescriptorInteropOutput: InteropOutput {
    private let fd: Int32
    private let name: String
    private var buffer: UnsafeMutableRawPointer
    private let capacity = 1 << 20
    private var used = 0
    public private(set) var position = 0

    /// An output to `fd`; `name` names it in errors.
    public init(fd: Int32, name: String) {
        self.fd = fd
        self.name = name
        self.buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 64)
    }

    deinit { buffer.deallocate() }

    public func write(_ bytes: UnsafeRawBufferPointer) throws(InteropError) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        position += bytes.count
        if used + bytes.count <= capacity {
            (buffer + used).copyMemory(from: base, byteCount: bytes.count)
            used += bytes.count
            return
        }
        try flush()
        if bytes.count >= capacity / 2 {
            try Self.writeAll(fd, base, bytes.count, name: name)
        } else {
            buffer.copyMemory(from: base, byteCount: bytes.count)
            used = bytes.count
        }
    }

    /// Hands the buffered bytes to the descriptor.
    public func flush() throws(InteropError) {
        if used > 0 { try Self.writeAll(fd, UnsafeRawPointer(buffer), used, name: name) }
        used = 0
    }

    /// Writes all of `count` bytes, in calls of at most 1 GiB, retrying on EINTR.
    static func writeAll(_ fd: Int32, _ base: UnsafeRawPointer, _ count: Int, name: String) throws(InteropError) {
        var p = base
        var left = count
        while left > 0 {
            let n = Glibc.write(fd, p, min(left, 1 << 30))
            if n < 0 {
                if errno == EINTR { continue }
                throw .io(file: name, operation: "write", errno: errno)
            }
            if n == 0 { throw .io(file: name, operation: "write", errno: EIO) }
            p += n
            left -= n
        }
    }
}

/// `Array.withUnsafeBytes` for a body that throws `InteropError` (the standard one rethrows `any Error`).
func withInteropBytes<T, R>(_ array: [T], _ body: (UnsafeRawBufferPointer) throws(InteropError) -> R) throws(InteropError) -> R {
    let result: Result<R, InteropError> = array.withUnsafeBytes { b in
        do throws(InteropError) { return .success(try body(b)) } catch { return .failure(error) }
    }
    return try result.get()
}
