import Dispatch
import Synchronization

/// Waiting on a Dispatch timer instead of the Swift concurrency pool: the client's pauses
/// between attempts and between export status requests (the default
/// ``DataLinkConfiguration/sleep``), like the transfer timeouts (``WatchdogTimer``).
///
/// `Task.sleep`'s wake-up is itself a job for the shared cooperative pool, so when that pool is
/// saturated (a CPU-bound query beside a fetch) the wait ends late, by as long as the pool stays
/// busy. Here the timer fires on its own serial Dispatch queue, on time whatever the pool does,
/// and only the resumption of the waiting task needs a pool thread.
@usableFromInline
package enum DispatchSleep {
    /// Suspends the current task for `duration` (not at all when it is not positive).
    ///
    /// - Throws: `CancellationError` when the task is cancelled, at once (not when the time is up).
    @usableFromInline
    package static func sleep(for duration: Duration) async throws {
        try await sleep(for: duration, onWake: {})
    }

    /// ``sleep(for:)``, calling `onWake` on the timer's queue when the time is up, before the
    /// task resumes (for tests: it runs even when no pool thread is free).
    package static func sleep(for duration: Duration, onWake: @escaping @Sendable () -> Void) async throws {
        let wake = Wake()
        let timer = WatchdogTimer {
            onWake()
            wake.finish(with: nil)
        }
        defer { timer.stop() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                if wake.install(continuation) { timer.fire(after: duration) }
            }
        } onCancel: {
            wake.finish(with: CancellationError())
        }
    }

    /// The one resumption of a sleeping task: by the timer or by cancellation, whichever comes
    /// first, also when cancellation comes before the continuation exists.
    private final class Wake: Sendable {
        private enum State {
            /// Neither the continuation nor an outcome yet.
            case idle
            /// The task is suspended, waiting.
            case waiting(CheckedContinuation<Void, any Error>)
            /// The outcome came first (cancellation before suspension); `nil` means woken.
            case decided((any Error)?)
            /// Resumed.
            case done
        }

        private let state = Mutex(State.idle)

        /// Stores the continuation; returns false (and resumes it) when the outcome is already known.
        func install(_ continuation: CheckedContinuation<Void, any Error>) -> Bool {
            let decided: (any Error)?? = state.withLock { state in
                if case .decided(let outcome) = state {
                    state = .done
                    return .some(outcome)
                }
                state = .waiting(continuation)
                return nil
            }
            guard let outcome = decided else { return true }
            if let error = outcome { continuation.resume(throwing: error) } else { continuation.resume() }
            return false
        }

        /// Resumes the task with `error` (or normally), once; later calls do nothing.
        func finish(with error: (any Error)?) {
            let continuation: CheckedContinuation<Void, any Error>? = state.withLock { state in
                switch state {
                case .idle:
                    state = .decided(error)
                    return nil
                case .waiting(let continuation):
                    state = .done
                    return continuation
                case .decided, .done:
                    return nil
                }
            }
            guard let continuation else { return }
            if let error { continuation.resume(throwing: error) } else { continuation.resume() }
        }
    }
}
