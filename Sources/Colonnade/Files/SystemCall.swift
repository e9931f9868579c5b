#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The package's one layer for system calls that a signal can interrupt: every `open`, `read`,
/// `write`, `pread`, `pwrite`, `poll`, `waitpid` and `fsync` goes through it, so `EINTR` is retried
/// in one place and a partial write is continued in one place (swift-system's
/// `valueOrErrno(retryOnInterrupt:)` is the model).
///
/// The calls return what the system call returns — a result, or `-1` with `errno` set to the
/// error that was not `EINTR` — so callers keep their own error types and messages.
package enum SystemCall {
    /// The most bytes one `write`/`pwrite`/`read` is asked for: Linux moves at most
    /// 0x7FFFF000 bytes per call, and smaller calls keep a partial result's retry cheap.
    package static let maximumTransfer = 1 << 30

    /// Calls `body` again while it fails with `EINTR`; returns its first other result.
    @inline(__always)
    package static func retryingOnInterrupt<Result: BinaryInteger>(_ body: () -> Result) -> Result {
        while true {
            let result = body()
            if result >= 0 || errno != EINTR { return result }
        }
    }

    /// Writes all `count` bytes at `base` to `fd` (at `offset` with `pwrite` when given, else at
    /// the file position), continuing partial writes and retrying `EINTR`, in calls of at most
    /// ``maximumTransfer`` bytes.
    ///
    /// - Returns: 0 when every byte is written, else the `errno` of the failing call (`EIO` for
    ///   a write that returned 0 bytes, which would otherwise loop for ever).
    package static func writeAll(_ fd: Int32, _ base: UnsafeRawPointer?, _ count: Int, at offset: Int? = nil) -> Int32 {
        var done = 0
        while done < count {
            let chunk = min(count - done, maximumTransfer)
            let pointer = base.map { $0 + done }
            let n = retryingOnInterrupt {
                if let offset { pwrite(fd, pointer, chunk, off_t(offset + done)) } else { write(fd, pointer, chunk) }
            }
            if n < 0 { return errno }
            if n == 0 { return EIO }
            done += n
        }
        return 0
    }

    /// Reads into `base` until `count` bytes are read or the input ends (at `offset` with `pread`
    /// when given, else from the file position), retrying `EINTR`, in calls of at most
    /// ``maximumTransfer`` bytes.
    ///
    /// - Returns: the bytes read (fewer than `count` only at the end of the input), or `-errno`.
    package static func readFully(_ fd: Int32, _ base: UnsafeMutableRawPointer, _ count: Int, at offset: Int? = nil) -> Int {
        var done = 0
        while done < count {
            let chunk = min(count - done, maximumTransfer)
            let n = retryingOnInterrupt {
                if let offset { pread(fd, base + done, chunk, off_t(offset + done)) } else { read(fd, base + done, chunk) }
            }
            if n < 0 { return -Int(errno) }
            if n == 0 { break }
            done += n
        }
        return done
    }
}
