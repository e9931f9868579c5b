@testable import Colonnade
import Dispatch
import Foundation
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `SignalCatcher`, the package's one way of acting on Ctrl-C and the shell's signals: every signal
/// reaches the handler once, whichever thread the kernel gave it to, and stopping gives the earlier
/// action back. (SIGUSR1: SystemCallTests uses SIGUSR2 in the same process.)
@Suite(.serialized) struct SignalCatcherTests {
    /// Waits for the handler to have run `count` times (a hang guard, not a timing).
    private static func wait(for count: Int, in calls: Calls) -> Bool {
        for _ in 0 ..< 60_000 {
            if calls.numbers.count >= count { return true }
            usleep(1_000)
        }
        return false
    }

    /// The signal numbers the handler was called with, in order.
    final class Calls: Sendable {
        private let list = Mutex<[Int32]>([])
        func add(_ number: Int32) { list.withLock { $0.append(number) } }
        var numbers: [Int32] { list.withLock { $0 } }
    }

    private static func isIgnored(_ action: sigaction) -> Bool {
        unsafeBitCast(action.__sigaction_handler.sa_handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self)
    }

    /// A signal sent to the process and one sent to a single thread (as `pthread_kill` does; a
    /// Linux `signalfd` read on another thread never sees that one) each call the handler once.
    @Test func aSignalReachesTheHandlerWhicheverThreadTakesIt() throws {
        let calls = Calls()
        let catcher = try #require(SignalCatcher(catching: [SIGUSR1]) { calls.add($0) })
        defer { catcher.stop() }

        kill(getpid(), SIGUSR1)
        #expect(Self.wait(for: 1, in: calls))

        let sent = DispatchSemaphore(value: 0)
        let thread = Thread {
            var set = sigset_t()
            sigemptyset(&set)
            sigaddset(&set, SIGUSR1)
            pthread_sigmask(SIG_UNBLOCK, &set, nil)
            pthread_kill(pthread_self(), SIGUSR1)
            sent.signal()
        }
        thread.start()
        sent.wait()
        #expect(Self.wait(for: 2, in: calls))

        // And a third, sent while the catcher's thread may be busy with nothing: still exactly one call.
        kill(getpid(), SIGUSR1)
        #expect(Self.wait(for: 3, in: calls))
        #expect(calls.numbers == [SIGUSR1, SIGUSR1, SIGUSR1])
    }

    /// Catchers overlap (fetches run side by side in one process): a signal calls each that asked
    /// for it; one that stopped is never called again; the earlier action (here: ignored) comes
    /// back only when the last one stops.
    @Test func overlappingCatchersEachGetTheSignalAndTheLastStopRestoresTheEarlierAction() throws {
        var ignore = sigaction()
        ignore.__sigaction_handler.sa_handler = SIG_IGN
        var original = sigaction()
        #expect(sigaction(SIGUSR1, &ignore, &original) == 0)
        defer { sigaction(SIGUSR1, &original, nil) }

        let first = Calls(), second = Calls()
        let a = try #require(SignalCatcher(catching: [SIGUSR1]) { first.add($0) })
        let b = try #require(SignalCatcher(catching: [SIGUSR1, SIGUSR1]) { second.add($0) })
        kill(getpid(), SIGUSR1)
        #expect(Self.wait(for: 1, in: first) && Self.wait(for: 1, in: second))

        a.stop()
        a.stop()  // idempotent
        var during = sigaction()
        sigaction(SIGUSR1, nil, &during)
        #expect(!Self.isIgnored(during), "the second catcher still catches")
        kill(getpid(), SIGUSR1)
        #expect(Self.wait(for: 2, in: second))
        #expect(first.numbers == [SIGUSR1], "a stopped catcher was called")

        b.stop()
        var after = sigaction()
        sigaction(SIGUSR1, nil, &after)
        #expect(Self.isIgnored(after))
        #expect(second.numbers == [SIGUSR1, SIGUSR1])
    }
}
