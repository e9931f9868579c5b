@testable import Colonnade
import Foundation
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `SystemCall`, the package's one layer for interruptible system calls: whole writes through a
/// pipe that takes them in pieces, reads that stop only at the end, offsets, failures as `errno`,
/// and reads that survive signals delivered without `SA_RESTART`.
@Suite struct SystemCallTests {
    /// Bytes 0, 1, 2, … (mod 251, so a shifted or repeated piece shows).
    static func pattern(_ count: Int) -> [UInt8] { (0 ..< count).map { UInt8($0 % 251) } }

    /// A pipe holds 64 KiB: a 3 MiB write goes in many partial writes while a reader drains it.
    @Test func aWriteLargerThanThePipeArrivesWholeAndInOrder() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let sent = Self.pattern(3 << 20 + 17)
        let received = Mutex<[UInt8]>([])
        let done = DispatchSemaphore(value: 0)
        Thread { [readEnd = ends[0]] in
            var bytes = [UInt8](repeating: 0, count: sent.count + 10)
            let n = bytes.withUnsafeMutableBytes { SystemCall.readFully(readEnd, $0.baseAddress!, $0.count) }
            received.withLock { $0 = Array(bytes.prefix(max(n, 0))) }
            done.signal()
        }.start()
        let failure = sent.withUnsafeBytes { SystemCall.writeAll(ends[1], $0.baseAddress, $0.count) }
        close(ends[1])
        done.wait()
        close(ends[0])
        #expect(failure == 0)
        // readFully stops at the end of the input: fewer bytes than asked, all of them right.
        #expect(received.withLock { $0 } == sent)
    }

    @Test func offsetsWriteAndReadWithoutMovingThePosition() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("systemcall-\(UUID().uuidString)").path
        defer { unlink(path) }
        let fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0o600)
        try #require(fd >= 0)
        defer { close(fd) }
        let head = Self.pattern(1000), tail = Self.pattern(300).reversed().map { $0 }
        #expect(head.withUnsafeBytes { SystemCall.writeAll(fd, $0.baseAddress, $0.count) } == 0)
        #expect(tail.withUnsafeBytes { SystemCall.writeAll(fd, $0.baseAddress, $0.count, at: 5000) } == 0)
        #expect(lseek(fd, 0, SEEK_CUR) == 1000, "pwrite leaves the position")
        var back = [UInt8](repeating: 0xFF, count: 400)
        let n = back.withUnsafeMutableBytes { SystemCall.readFully(fd, $0.baseAddress!, $0.count, at: 4900) }
        #expect(n == 400)
        #expect(back[..<100].allSatisfy { $0 == 0 }, "the hole reads as zeros")
        #expect(Array(back[100...]) == tail)
        // Past the end: 0 bytes, not an error.
        #expect(back.withUnsafeMutableBytes { SystemCall.readFully(fd, $0.baseAddress!, $0.count, at: 10_000) } == 0)
        // Nothing to write is done at once, even without a buffer.
        #expect(SystemCall.writeAll(fd, nil, 0) == 0)
    }

    @Test func failuresComeBackAsErrno() {
        var byte: UInt8 = 1
        #expect(SystemCall.writeAll(-1, &byte, 1) == EBADF)
        #expect(SystemCall.readFully(-1, &byte, 1) == -Int(EBADF))
        #expect(SystemCall.retryingOnInterrupt { close(-1) } == -1 && errno == EBADF)
        let readOnly = open("/dev/null", O_RDONLY)
        defer { close(readOnly) }
        #expect(SystemCall.writeAll(readOnly, &byte, 1) == EBADF)
    }

    /// A handler installed without `SA_RESTART` makes a blocked `read` fail with `EINTR`; the
    /// layer reads on. Signals keep arriving until the handler has run at least 20 times, then
    /// the data is written: the read's answer is the data, whichever reads the signals cut.
    @Test func aReadSurvivesSignalsWithoutRestart() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer {
            close(ends[0])
            close(ends[1])
        }
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in SystemCallTests.signalsHandled.add(1, ordering: .relaxed) }
        action.sa_flags = 0
        var previous = sigaction()
        #expect(sigaction(SIGUSR2, &action, &previous) == 0)
        defer { sigaction(SIGUSR2, &previous, nil) }
        Self.signalsHandled.store(0, ordering: .relaxed)

        let readerThread = Mutex<pthread_t?>(nil)
        let result = Mutex<[UInt8]?>(nil)
        let finished = DispatchSemaphore(value: 0)
        let reader = Thread { [readEnd = ends[0]] in
            // Threads may start with signals blocked; this one takes SIGUSR2.
            var set = sigset_t()
            sigemptyset(&set)
            sigaddset(&set, SIGUSR2)
            pthread_sigmask(SIG_UNBLOCK, &set, nil)
            readerThread.withLock { $0 = pthread_self() }
            var bytes = [UInt8](repeating: 0, count: 64)
            let n = bytes.withUnsafeMutableBytes { SystemCall.readFully(readEnd, $0.baseAddress!, 64) }
            result.withLock { $0 = n >= 0 ? Array(bytes.prefix(n)) : nil }
            finished.signal()
        }
        reader.start()
        while readerThread.withLock({ $0 }) == nil { usleep(100) }
        let thread = try #require(readerThread.withLock { $0 })
        // Bounded, so a signal that never arrives fails the test instead of hanging it.
        var sentSignals = 0
        while Self.signalsHandled.load(ordering: .relaxed) < 20 && sentSignals < 20_000 {
            pthread_kill(thread, SIGUSR2)
            sentSignals += 1
            usleep(500)
        }
        #expect(
            Self.signalsHandled.load(ordering: .relaxed) >= 20,
            "the reader took \(Self.signalsHandled.load(ordering: .relaxed)) of \(sentSignals) signals")
        let sent = Self.pattern(64)
        #expect(sent.withUnsafeBytes { SystemCall.writeAll(ends[1], $0.baseAddress, $0.count) } == 0)
        finished.wait()
        #expect(result.withLock { $0 } == sent)
    }

    static let signalsHandled = Atomic<Int>(0)
}
