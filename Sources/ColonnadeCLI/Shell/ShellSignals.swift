import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The signals `colonnade shell` handles while the terminal is in raw mode.
///
/// - SIGTERM, SIGHUP, SIGQUIT: the terminal is put back as it was (``TerminalMode/restore()``),
///   then the process ends by the same signal, as it would have without a handler — so a `kill`
///   or a closed terminal window never leaves the user's terminal without echo or line editing.
///   History needs nothing: each line is already on disk when it is entered.
/// - SIGINT (from `kill -INT`; the Ctrl-C key arrives as a byte in raw mode): the same as Ctrl-C —
///   at the prompt it abandons the line, during a query it cancels the query. It is reported on
///   ``interruptDescriptor``, which the line editor and the query watcher poll beside the terminal.
///
/// The handlers run on a dispatch queue, not in signal context, so they may lock and write.
final class ShellSignals {
    /// Becomes readable when SIGINT arrived; ``takeInterrupt()`` drains it.
    let interruptDescriptor: Int32
    private let interruptWriteEnd: Int32
    private var sources: [any DispatchSourceSignal] = []
    private static let ending: [Int32] = [SIGTERM, SIGHUP, SIGQUIT]

    /// Installs the handlers; `mode` is restored before an ending signal ends the process, and a
    /// line feed written to `terminal` so the next prompt starts at the left edge.
    /// - Returns: nil when the interrupt pipe cannot be made (the shell then runs without them).
    init?(restoring mode: TerminalMode, terminal: Int32) {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { return nil }
        interruptDescriptor = ends[0]
        interruptWriteEnd = ends[1]
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        for number in Self.ending {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                mode.restore()
                var newline: [UInt8] = [13, 10]
                _ = write(terminal, &newline, 2)
                Self.endBy(number)
            }
            source.resume()
            sources.append(source)
        }
        signal(SIGINT, SIG_IGN)
        let interrupt = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        let writeEnd = interruptWriteEnd
        interrupt.setEventHandler {
            var byte: UInt8 = 3
            _ = write(writeEnd, &byte, 1)  // a full pipe already says "interrupted"
        }
        interrupt.resume()
        sources.append(interrupt)
    }

    /// Whether SIGINT arrived since the last call (and forgets it).
    func takeInterrupt() -> Bool {
        var bytes = [UInt8](repeating: 0, count: 64)
        var any = false
        while read(interruptDescriptor, &bytes, bytes.count) > 0 { any = true }
        return any
    }

    /// Removes the handlers and gives the signals their default actions back.
    func stop() {
        for source in sources { source.cancel() }
        sources.removeAll()
        for number in Self.ending + [SIGINT] { signal(number, SIG_DFL) }
    }

    deinit {
        stop()
        close(interruptDescriptor)
        close(interruptWriteEnd)
    }

    /// Ends the process by `number` with its default action (so the parent sees "killed by
    /// SIGTERM"), or with status 128 + `number` should the signal not end it.
    private static func endBy(_ number: Int32) -> Never {
        signal(number, SIG_DFL)
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, number)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
        raise(number)
        _exit(128 + number)
    }
}
