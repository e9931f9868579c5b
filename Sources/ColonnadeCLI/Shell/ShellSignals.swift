import Colonnade
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
/// The handlers run on the thread of a ``SignalCatcher`` (the package's one signal mechanism, also
/// Ctrl-C during a fetch), not in signal context, so they may lock and write.
final class ShellSignals {
    /// Becomes readable when SIGINT arrived; ``takeInterrupt()`` drains it.
    let interruptDescriptor: Int32
    private let interruptWriteEnd: Int32
    private var catcher: SignalCatcher?
    private static let ending: [Int32] = [SIGTERM, SIGHUP, SIGQUIT]

    /// Installs the handlers; `mode` is restored before an ending signal ends the process, and a
    /// line feed written to `terminal` so the next prompt starts at the left edge.
    /// - Returns: nil when the interrupt pipe cannot be made or the signals cannot be caught (the
    ///   shell then runs without them).
    init?(restoring mode: TerminalMode, terminal: Int32) {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { return nil }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        let writeEnd = ends[1]
        let catcher = SignalCatcher(catching: Self.ending + [SIGINT]) { number in
            if number == SIGINT {
                var byte: UInt8 = 3
                _ = write(writeEnd, &byte, 1)  // a full pipe already says "interrupted"
                return
            }
            mode.restore()
            var newline: [UInt8] = [13, 10]
            _ = write(terminal, &newline, 2)
            Self.endBy(number)
        }
        guard let catcher else {
            close(ends[0])
            close(ends[1])
            return nil
        }
        interruptDescriptor = ends[0]
        interruptWriteEnd = ends[1]
        self.catcher = catcher
    }

    /// Whether SIGINT arrived since the last call (and forgets it).
    func takeInterrupt() -> Bool {
        var bytes = [UInt8](repeating: 0, count: 64)
        var any = false
        while read(interruptDescriptor, &bytes, bytes.count) > 0 { any = true }
        return any
    }

    /// Removes the handlers and gives the signals their earlier actions back.
    func stop() {
        catcher?.stop()
        catcher = nil
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
