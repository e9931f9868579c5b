#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// A terminal switched to the raw input mode `colonnade shell` edits lines in, and back.
///
/// Input: no line buffering, no echo, no signals from keys (Ctrl-C and Ctrl-Z arrive as bytes,
/// so Ctrl-C can cancel a query without a signal handler), no CR→NL or flow control. Output
/// processing stays on, so `\n` still starts a new line at the left edge.
///
/// ``restore()`` may be called from any thread and any number of times (``ShellSignals`` calls it
/// when SIGTERM or SIGHUP arrives, the shell again on its way out).
final class TerminalMode: Sendable {
    private let fileDescriptor: Int32
    private let saved: termios
    private let isRaw: Mutex<Bool>

    /// Switches `fileDescriptor` to raw input; nil when it is not a terminal.
    init?(fileDescriptor: Int32) {
        self.fileDescriptor = fileDescriptor
        var original = termios()
        guard isatty(fileDescriptor) == 1, tcgetattr(fileDescriptor, &original) == 0 else { return nil }
        saved = original
        var raw = original
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO | ISIG | IEXTEN)
        raw.c_iflag &= ~tcflag_t(ICRNL | IXON | INLCR | IGNCR)
        // Safe: c_cc is a fixed-size C array of NCCS bytes; VMIN and VTIME are indices in it.
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        guard tcsetattr(fileDescriptor, TCSAFLUSH, &raw) == 0 else { return nil }
        isRaw = Mutex(true)
    }

    /// Puts the terminal back as it was (once; later calls do nothing).
    func restore() {
        isRaw.withLock { raw in
            guard raw else { return }
            var original = saved
            tcsetattr(fileDescriptor, TCSAFLUSH, &original)
            raw = false
        }
    }

    deinit { restore() }
}
