#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Room for the recursions that follow an expression's nesting: parsing, planning, compiling,
/// evaluating and printing.
///
/// Nesting is capped (`QueryParser.maximumNestingDepth`, 1,000 levels of text; a tree at most
/// `QueryParser.maximumTreeDepth` deep), and each of those walks recurses once per level. A level
/// costs from 1.5 KB (printing) to 43 KB (a parenthesised group in the parser) of stack in a
/// debug build, far less optimized, so 1,000 levels do not fit the 512 KB of a secondary thread on
/// Darwin, nor always the 8 MB of a Linux thread. A walk over anything deeper than
/// `inlineDepth` therefore runs on a thread of its own with a `stackBytes` stack (address space,
/// committed only as it is touched) while the caller waits; shallow ones — every everyday query —
/// run inline as before.
enum DeepRecursion {
    /// Nesting up to which a walk runs on the caller's stack (64 levels of the largest frame, the
    /// parser's, stay under 3 MB in a debug build; optimized, a fraction of that).
    static let inlineDepth = 64

    /// The stack of the thread a deep walk runs on: room for `maximumTreeDepth` levels of the
    /// largest frame with a wide margin.
    static let stackBytes = 512 << 20

    /// `body()` on the caller's stack when `depth <= inlineDepth`, else on a thread with a
    /// `stackBytes` stack, the caller blocked until it returns.
    static func run<T, E: Error>(depth: Int, _ body: () throws(E) -> T) throws(E) -> T {
        if depth <= inlineDepth { return try body() }
        var result: Result<T, E>?
        withoutActuallyEscaping(body) { body in
            let job = Job {
                do throws(E) { result = .success(try body()) } catch { result = .failure(error) }
            }
            if !job.runOnLargeStack() { job.work() }  // no thread to be had: try in place
        }
        // Safe: the job ran (on its thread, joined, or here) and set the result.
        return try result!.get()
    }

    /// Work handed to the thread; the caller keeps it alive and waits for the thread to end.
    private final class Job: @unchecked Sendable {
        // Safe (@unchecked): the creating thread blocks in pthread_join while the new thread runs
        // `work`, so the two never touch what it captures at the same time.
        let work: () -> Void
        init(_ work: @escaping () -> Void) { self.work = work }

        /// Runs `work` on a new thread with a `stackBytes` stack and waits; false if no such
        /// thread could be created (nothing ran).
        func runOnLargeStack() -> Bool {
            var attributes = pthread_attr_t()
            guard pthread_attr_init(&attributes) == 0 else { return false }
            defer { pthread_attr_destroy(&attributes) }
            guard pthread_attr_setstacksize(&attributes, DeepRecursion.stackBytes) == 0 else { return false }
            let context = Unmanaged.passRetained(self).toOpaque()
            #if canImport(Darwin)
            var thread: pthread_t?
            #else
            var thread = pthread_t()
            #endif
            let created = pthread_create(
                &thread, &attributes,
                { context in
                    // Safe: `context` is the retained Job passed below.
                    let job = Unmanaged<Job>.fromOpaque(context!).takeRetainedValue()
                    job.work()
                    return nil
                }, context)
            guard created == 0 else {
                Unmanaged<Job>.fromOpaque(context).release()
                return false
            }
            #if canImport(Darwin)
            pthread_join(thread!, nil)
            #else
            pthread_join(thread, nil)
            #endif
            return true
        }
    }
}
