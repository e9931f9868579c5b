import Colonnade
import DataLinkFormat
import Dispatch
import Foundation

/// Runs numbered jobs on the global queue and hands their results, in number order, to `deliver`
/// (one call at a time, on whichever worker finished the job that was next).
///
/// At most `maximumInFlight` jobs are submitted and not yet delivered: `submit` waits for room,
/// so a fast producer (the inflating thread) cannot run ahead of the decoders by more than that,
/// and memory stays bounded. A job returning nil, or `deliver` returning false, fails the
/// pipeline: later jobs are not run (their closures return at once), nothing more is delivered,
/// and the producer sees `failed` and stops.
final class ChunkPipeline<Output: Sendable>: @unchecked Sendable {
    // Safe: `ready`, `next`, `delivering` and `failedFlag` are guarded by `lock`; `room` and
    // `group` are thread-safe; `deliver` is called by one thread at a time (`delivering`).
    private let lock = NSLock()
    private let room: DispatchSemaphore
    private let group = DispatchGroup()
    private var ready: [Int: Output] = [:]
    private var next = 0
    private var submitted = 0
    private var delivering = false
    private var failedFlag = false
    private let deliver: (Output) -> Bool

    /// - Parameters:
    ///   - maximumInFlight: jobs submitted and not yet delivered, at most (at least 1).
    ///   - deliver: takes each result in order; false fails the pipeline.
    init(maximumInFlight: Int, deliver: @escaping (Output) -> Bool) {
        room = DispatchSemaphore(value: Swift.max(1, maximumInFlight))
        self.deliver = deliver
    }

    /// Whether a job or a delivery failed.
    var failed: Bool { lock.withLock { failedFlag } }

    /// Submits the next job (numbered in submission order), after waiting for room. Does nothing
    /// once the pipeline has failed.
    func submit(_ job: @escaping @Sendable () -> Output?) {
        room.wait()
        let index: Int? = lock.withLock {
            if failedFlag { return nil }
            defer { submitted += 1 }
            return submitted
        }
        guard let index else {
            room.signal()
            return
        }
        DispatchQueue.global().async(group: group) {
            let result = self.failed ? nil : job()
            self.complete(index, result)
        }
    }

    /// Waits until every submitted job has run and every result that can be delivered has been.
    func finish() { group.wait() }

    /// Marks the pipeline failed (a producer-side error): nothing more runs or is delivered.
    func fail() { markFailed() }

    private func complete(_ index: Int, _ result: Output?) {
        lock.lock()
        guard let result, !failedFlag else {
            let released = failLocked()
            lock.unlock()
            for _ in 0 ..< released + 1 { room.signal() }  // this job's room, and the dropped results'
            return
        }
        ready[index] = result
        if delivering {
            lock.unlock()
            return
        }
        delivering = true
        while !failedFlag, let item = ready.removeValue(forKey: next) {
            next += 1
            lock.unlock()
            let ok = deliver(item)
            room.signal()
            lock.lock()
            if !ok {
                let released = failLocked()
                for _ in 0 ..< released { room.signal() }
            }
        }
        delivering = false
        lock.unlock()
    }

    private func markFailed() {
        lock.lock()
        let released = failLocked()
        lock.unlock()
        for _ in 0 ..< released { room.signal() }
    }

    /// Sets the failed flag and drops undelivered results; how many rooms they held.
    private func failLocked() -> Int {
        failedFlag = true
        let n = ready.count
        ready.removeAll()
        return n
    }
}
