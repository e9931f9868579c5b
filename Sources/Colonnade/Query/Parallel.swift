import Dispatch
import Synchronization

/// A pointer handed to worker threads that write disjoint parts of the memory it points to.
package struct SharedPointer<T>: @unchecked Sendable {
    // Safe: every worker writes only the words of the chunks it claimed.
    package let base: UnsafeMutablePointer<T>
    package init(base: UnsafeMutablePointer<T>) { self.base = base }
}

/// Hands out chunk numbers to workers.
private final class ChunkCounter: Sendable {
    let next = Atomic<Int>(0)
}

/// Runs `body(chunk, worker)` for every chunk in `0..<chunks` on up to `threads` threads, each
/// worker claiming the next unclaimed chunk. With one thread (or one chunk) it runs inline.
package func forEachChunk(_ chunks: Int, threads: Int, _ body: (_ chunk: Int, _ worker: Int) -> Void) {
    let workers = min(threads, chunks)
    if workers <= 1 {
        for c in 0 ..< chunks { body(c, 0) }
        return
    }
    ParallelRegions.counter?.regions.add(1, ordering: .relaxed)
    let counter = ChunkCounter()
    withoutActuallyEscaping(body) { body in
        let shared = UncheckedSendableBox(body)
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            while true {
                let c = counter.next.add(1, ordering: .relaxed).oldValue
                if c >= chunks { break }
                shared.value(c, worker)
            }
        }
    }
}

/// A value handed to other threads that the caller knows is safe to share.
struct UncheckedSendableBox<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}

/// Counts the parallel regions (`forEachChunk` with two or more workers) started within
/// `counted`'s body on its thread: how tests check that `threads: 1` keeps an import, save
/// included, on one thread, by counting work rather than timing it.
package enum ParallelRegions {
    package final class Counter: Sendable {
        let regions = Atomic<Int>(0)
    }

    @TaskLocal package static var counter: Counter?

    /// `body`'s result and the parallel regions it started from this thread.
    package static func counted<R>(_ body: () throws -> R) rethrows -> (R, regions: Int) {
        let counter = Counter()
        let result = try $counter.withValue(counter) { try body() }
        return (result, counter.regions.load(ordering: .relaxed))
    }
}
