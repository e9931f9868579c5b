import Dispatch
import Synchronization

/// A one-shot Dispatch timer that can be re-armed, on a serial queue of its own: it fires on
/// time even when the Swift concurrency pool is saturated.
package final class WatchdogTimer: Sendable {
    private static let queue = DispatchQueue(label: "colonnade.datalink.watchdog", qos: .userInitiated)
    // Safe: a `DispatchSourceTimer` may be scheduled, resumed and cancelled from any thread; the
    // mutex orders our own calls (`resumed` guards the single `resume`).
    private struct Source: @unchecked Sendable { let timer: any DispatchSourceTimer }
    private let source: Source
    private let state = Mutex((resumed: false, stopped: false))

    package init(_ handler: @escaping @Sendable () -> Void) {
        let timer = DispatchSource.makeTimerSource(queue: Self.queue)
        timer.setEventHandler(handler: handler)
        source = Source(timer: timer)
    }

    /// Fires the handler once, `delay` from now (at once when it is not positive).
    package func fire(after delay: Duration) {
        state.withLock { state in
            guard !state.stopped else { return }
            source.timer.schedule(deadline: .now() + Self.interval(delay), leeway: .milliseconds(1))
            if !state.resumed {
                state.resumed = true
                source.timer.resume()
            }
        }
    }

    /// Cancels the timer for good; a pending firing never runs.
    package func stop() {
        state.withLock { state in
            guard !state.stopped else { return }
            state.stopped = true
            if !state.resumed { source.timer.resume() }  // a suspended source must be resumed to be released
            source.timer.cancel()
        }
    }

    deinit { stop() }

    /// `d` as a Dispatch interval: at least 0, at most a day (later checks re-arm).
    package static func interval(_ d: Duration) -> DispatchTimeInterval {
        let seconds = d.components.seconds
        if seconds < 0 { return .nanoseconds(0) }
        if seconds >= 86_400 { return .seconds(86_400) }
        return .nanoseconds(Int(seconds) * 1_000_000_000 + Int(d.components.attoseconds / 1_000_000_000))
    }
}
