#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Readable pages between two pages the process may not read, so that a scan reading one byte
/// past its input (or before it) crashes the test instead of passing by luck.
///
///     let memory = GuardedBytes()
///     memory.withBytesAtEnd(bytes) { Day.parseDay($0, count: bytes.count) }  // last byte before the guard
///
/// Not `Sendable`: one per test.
public final class GuardedBytes {
    private let pageSize: Int
    private let pages: Int
    /// The leading guard page; the readable pages follow it, then the trailing guard page.
    private let mapping: UnsafeMutableRawPointer

    /// - Parameter pages: The readable pages between the guards; the longest input is that many pages.
    public init(pages: Int = 2) {
        pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
        self.pages = pages
        let length = pageSize * (pages + 2)
        guard let raw = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), raw != MAP_FAILED else {
            preconditionFailure("mmap of \(length) bytes failed: errno \(errno)")
        }
        mapping = raw
        precondition(mprotect(mapping, pageSize, PROT_NONE) == 0, "mprotect failed")
        precondition(mprotect(mapping + pageSize * (pages + 1), pageSize, PROT_NONE) == 0, "mprotect failed")
    }

    deinit { munmap(mapping, pageSize * (pages + 2)) }

    /// Copies `bytes` so that they end at the trailing guard page and calls `body` with their start.
    public func withBytesAtEnd<R>(_ bytes: [UInt8], _ body: (UnsafePointer<UInt8>) throws -> R) rethrows -> R {
        precondition(bytes.count <= pageSize * pages)
        return try body(copy(bytes, to: pageSize * (pages + 1) - bytes.count))
    }

    /// Copies `bytes` so that they start right after the leading guard page and calls `body` with
    /// their start.
    public func withBytesAtStart<R>(_ bytes: [UInt8], _ body: (UnsafePointer<UInt8>) throws -> R) rethrows -> R {
        precondition(bytes.count <= pageSize * pages)
        return try body(copy(bytes, to: pageSize))
    }

    private func copy(_ bytes: [UInt8], to offset: Int) -> UnsafePointer<UInt8> {
        let start = (mapping + offset).assumingMemoryBound(to: UInt8.self)
        bytes.withUnsafeBufferPointer { source in
            if let from = source.baseAddress { start.update(from: from, count: source.count) }
        }
        return UnsafePointer(start)
    }
}
