#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Foundation
import Synchronization

/// The package's one way of acting on asynchronous signals (Ctrl-C during a fetch, the shell's
/// SIGINT, SIGTERM, SIGHUP and SIGQUIT): a `sigaction` handler writes the signal's number, one
/// byte, to a pipe, and one thread of the process, blocked reading that pipe, calls the handlers
/// of the catchers that asked for the signal, at once.
///
/// Why not a Dispatch signal source: on Linux libdispatch receives signals through a `signalfd`
/// and runs the handler on a global queue, after whatever else is queued there; Ctrl-C during a
/// bulk fetch's export wait was seen acted on only two status requests (over 6 s of waits) later,
/// in a full parallel test run. Here the kernel runs the `sigaction` handler on a thread that takes
/// the signal, the handler only writes a byte (async-signal-safe), and the thread that reads the
/// pipe does nothing else, so a catcher's handler runs as soon as that thread is scheduled, whatever
/// the concurrency pool, Dispatch or URLSession threads are doing.
///
/// A process inherits its parent's signal mask (Foundation's `Process` started from a thread that
/// blocks SIGINT, a job runner that blocks it): where every thread blocks a signal, no handler
/// ever runs. The reading thread unblocks the signals that catchers ask for (and only those,
/// only while they are asked for), so they are taken whatever the other threads block.
///
/// Catchers may overlap (fetches run side by side in one process): a signal calls every catcher
/// that asked for it; the earlier action comes back when the last of them stops. The handlers are
/// installed with `SA_RESTART`, and the package's system calls retry `EINTR` anyway
/// (``SystemCall``).
package final class SignalCatcher: Sendable {
    private let id: Int
    private let stopped = Atomic<Bool>(false)

    /// Catches `signals` until ``stop()``, calling `handler` with each signal's number on the
    /// reading thread (so it may lock, write and allocate; it may also end the process, but it must
    /// not block for long: other catchers wait behind it; nor may it call ``stop()``).
    ///
    /// - Returns: nil when the process's signal pipe could not be made (the signals keep their
    ///   actions).
    package init?(catching signals: [Int32], handler: @escaping @Sendable (Int32) -> Void) {
        guard let dispatcher = SignalDispatcher.shared else { return nil }
        id = dispatcher.register(Set(signals), handler: handler)
    }

    /// Stops calling the handler (once this returns, it is never called again) and, for each
    /// signal no other catcher asks for, gives back the action it had before. Idempotent.
    package func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        SignalDispatcher.shared?.unregister(id)
    }

    deinit { stop() }
}

/// The process's signal pipe, the handlers installed on it, and the thread that reads it.
private final class SignalDispatcher: Sendable {
    private struct Registration {
        var signals: Set<Int32>
        var handler: @Sendable (Int32) -> Void
    }

    private struct State {
        var nextID = 0
        var registrations: [Int: Registration] = [:]
        /// The action each caught signal had before the first catcher asked for it.
        var previous: [Int32: sigaction] = [:]
        /// Callers waiting for the reading thread to take their change of the signal mask.
        var waiting: [DispatchSemaphore] = []

        var caught: Set<Int32> { registrations.values.reduce(into: []) { $0.formUnion($1.signals) } }
    }

    private let state = Mutex(State())
    private let readEnd: Int32

    /// Made once, never closed: a handler running on another thread as a catcher stops must never
    /// write to a descriptor that was closed and reused. nil when the pipe cannot be made.
    static let shared: SignalDispatcher? = {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { return nil }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        // The handler never blocks: a full pipe already says "a signal came".
        _ = fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK)
        writeEnd.store(ends[1], ordering: .releasing)
        return SignalDispatcher(readEnd: ends[0])
    }()

    /// The write end for the handler: an atomic, set before any handler is installed.
    private static let writeEnd = Atomic<Int32>(-1)

    /// The byte that asks the reading thread to recompute its signal mask (no signal is 0).
    private static let maskChanged: UInt8 = 0

    private init(readEnd: Int32) {
        self.readEnd = readEnd
        let ready = DispatchSemaphore(value: 0)
        let thread = Thread { [self] in
            applyMask(caught: [])
            ready.signal()
            run()
        }
        thread.name = "colonnade-signals"
        thread.start()
        ready.wait()
    }

    func register(_ signals: Set<Int32>, handler: @escaping @Sendable (Int32) -> Void) -> Int {
        let waiter = DispatchSemaphore(value: 0)
        let id = state.withLock { state -> Int in
            let id = state.nextID
            state.nextID += 1
            // The handler first: the reading thread is about to unblock the signal, and one already
            // pending must find the handler, not the default action.
            for number in signals.subtracting(state.caught).sorted() {
                var action = sigaction()
                #if canImport(Glibc)
                action.__sigaction_handler.sa_handler = Self.handler
                #else
                action.__sigaction_u.__sa_handler = Self.handler
                #endif
                action.sa_flags = SA_RESTART
                sigemptyset(&action.sa_mask)
                var old = sigaction()
                _ = sigaction(number, &action, &old)
                state.previous[number] = old
            }
            state.registrations[id] = Registration(signals: signals, handler: handler)
            state.waiting.append(waiter)
            return id
        }
        Self.wake()
        waiter.wait()
        return id
    }

    func unregister(_ id: Int) {
        let waiter = DispatchSemaphore(value: 0)
        state.withLock { state in
            guard let gone = state.registrations.removeValue(forKey: id) else { return }
            for number in gone.signals.subtracting(state.caught).sorted() {
                if var old = state.previous.removeValue(forKey: number) { _ = sigaction(number, &old, nil) }
            }
            state.waiting.append(waiter)
        }
        // Once the reading thread has taken the byte, every signal byte before it is handled and
        // no later one can reach the handler that was removed.
        Self.wake()
        waiter.wait()
    }

    /// Asks the reading thread to recompute its mask.
    private static func wake() {
        var byte = maskChanged
        _ = SystemCall.retryingOnInterrupt { write(writeEnd.load(ordering: .acquiring), &byte, 1) }
    }

    /// The reading thread: each signal byte calls the handlers that ask for it; each mask byte
    /// unblocks exactly the caught signals on this thread and releases the callers that waited.
    private func run() {
        var bytes = [UInt8](repeating: 0, count: 64)
        while true {
            let n = SystemCall.retryingOnInterrupt { read(readEnd, &bytes, bytes.count) }
            if n <= 0 { continue }  // never closed; nothing else ends the read
            for byte in bytes[..<n] {
                if byte == Self.maskChanged {
                    let (caught, waiting) = state.withLock { state in
                        defer { state.waiting.removeAll() }
                        return (state.caught, state.waiting)
                    }
                    applyMask(caught: caught)
                    for waiter in waiting { waiter.signal() }
                    continue
                }
                let number = Int32(byte)
                let handlers = state.withLock { state in
                    state.registrations.sorted { $0.key < $1.key }.filter { $0.value.signals.contains(number) }.map(\.value.handler)
                }
                for handler in handlers { handler(number) }
            }
        }
    }

    /// Blocks every asynchronous signal on this thread but those in `caught` (the synchronous
    /// ones, which a fault raises on the faulting thread, are left alone).
    private func applyMask(caught: Set<Int32>) {
        var set = sigset_t()
        sigfillset(&set)
        for number in [SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGABRT, SIGSYS] { sigdelset(&set, number) }
        for number in caught { sigdelset(&set, number) }
        pthread_sigmask(SIG_SETMASK, &set, nil)
    }

    /// The `sigaction` handler: writes the signal's number, and nothing else (async-signal-safe;
    /// `errno` is kept for the interrupted code).
    private static let handler: @convention(c) (Int32) -> Void = { number in
        let saved = errno
        var byte = UInt8(truncatingIfNeeded: number)
        let fd = SignalDispatcher.writeEnd.load(ordering: .acquiring)
        if fd >= 0 { _ = write(fd, &byte, 1) }
        errno = saved
    }
}
