import Colonnade
import DataLinkFormat
import Dispatch
import Foundation

/// Decodes responses on threads of their own while the next one downloads (ARCHITECTURE.md,
/// *Fetching*): `decode` starts the work on a concurrent dispatch queue and returns at once with
/// a ``DecodeAhead/Pending`` for its result, so the caller goes straight on to its next request.
///
/// At most `depth` decodes are queued or running at a time: `decode` waits (without blocking a
/// thread) for a free slot first, so bodies cannot pile up in memory when decoding is slower
/// than downloading. Decoding runs off the concurrency runtime's cooperative pool, which keeps
/// its few threads free for the downloads.
package final class DecodeAhead: Sendable {
    /// One decode's result, in the order the caller started them.
    package final class Pending<Output: Sendable>: @unchecked Sendable {
        // Safe: `result` and `waiters` are behind `lock`.
        private let lock = NSLock()
        private var result: Result<Output, any Error>?
        private var waiters: [CheckedContinuation<Result<Output, any Error>, Never>] = []

        /// A pending result that is already known (a decode done on the caller's thread).
        package init(_ result: Result<Output, any Error>? = nil) {
            self.result = result
        }

        package func fulfil(_ value: Result<Output, any Error>) {
            let resumed = lock.withLock { () -> [CheckedContinuation<Result<Output, any Error>, Never>] in
                result = value
                defer { waiters = [] }
                return waiters
            }
            for waiter in resumed { waiter.resume(returning: value) }
        }

        /// The result once known, without waiting; nil while decoding.
        package var finished: Result<Output, any Error>? { lock.withLock { result } }

        /// Waits for the result.
        package var value: Result<Output, any Error> {
            get async {
                await withCheckedContinuation { continuation in
                    let known = lock.withLock { () -> Result<Output, any Error>? in
                        if result == nil { waiters.append(continuation) }
                        return result
                    }
                    if let known { continuation.resume(returning: known) }
                }
            }
        }
    }

    /// What a test may watch: a decode's start and end, by its number (0-based, in the order
    /// `decode` was called). Called on the decoding thread.
    package enum Event: Sendable, Equatable {
        case started(Int)
        case finished(Int)
    }

    private let slots: Slots
    private let queue = DispatchQueue(label: "colonnade.fetch-decode", qos: .userInitiated, attributes: .concurrent)
    private let counter = Counter()
    private let events: (@Sendable (Event) -> Void)?

    /// - Parameters:
    ///   - depth: How many decodes may be queued or running at once (at least 1).
    ///   - events: Called as each decode starts and ends (tests).
    package init(depth: Int, events: (@Sendable (Event) -> Void)? = nil) {
        slots = Slots(count: max(1, depth))
        self.events = events
    }

    /// Starts `work` on a decoding thread once a slot is free, and returns its pending result.
    package func decode<Output: Sendable>(_ work: @escaping @Sendable () throws -> Output) async -> Pending<Output> {
        await slots.acquire()
        let pending = Pending<Output>()
        let number = counter.next()
        queue.async { [events, slots] in
            events?(.started(number))
            let result = Result { try work() }
            events?(.finished(number))
            slots.release()
            pending.fulfil(result)
        }
        return pending
    }

    /// A counting semaphore that waits with a continuation, not a blocked thread; waiters are
    /// served in order.
    private final class Slots: @unchecked Sendable {
        // Safe: all state behind `lock`.
        private let lock = NSLock()
        private var free: Int
        private var waiters: [CheckedContinuation<Void, Never>] = []

        init(count: Int) { free = count }

        func acquire() async {
            await withCheckedContinuation { continuation in
                let now = lock.withLock { () -> Bool in
                    if free > 0 {
                        free -= 1
                        return true
                    }
                    waiters.append(continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        }

        /// Hands the slot to the first waiter, or frees it.
        func release() {
            let next = lock.withLock { () -> CheckedContinuation<Void, Never>? in
                if waiters.isEmpty {
                    free += 1
                    return nil
                }
                return waiters.removeFirst()
            }
            next?.resume()
        }
    }

    private final class Counter: @unchecked Sendable {
        // Safe: behind `lock`.
        private let lock = NSLock()
        private var value = 0
        func next() -> Int {
            lock.withLock {
                defer { value += 1 }
                return value
            }
        }
    }
}
