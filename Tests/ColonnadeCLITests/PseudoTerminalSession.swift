import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The built `colonnade` run on a pseudo-terminal (`openpty`): keys are written to the master
/// side, everything the program draws is collected from it by a reader thread. Waits are for
/// conditions (text appearing, the process ending), never fixed sleeps.
final class PseudoTerminalSession: @unchecked Sendable {
    // @unchecked: `process` is touched only by the test's thread; the output is behind a Mutex.
    struct TimedOut: Error, CustomStringConvertible {
        var waitingFor: String
        var output: String
        var description: String { "timed out waiting for \(waitingFor.debugDescription); output so far: \(output.debugDescription)" }
    }

    private let master: Int32
    private let process = Process()
    /// The bytes read from the master side, shared with the reader thread.
    private final class Collected: Sendable {
        let bytes = Mutex<[UInt8]>([])
    }
    private let collected = Collected()
    private let readerDone = DispatchSemaphore(value: 0)

    /// Starts `colonnade arguments` (or `executable arguments`: an interactive shell, to drive its
    /// completion) with the terminal as its standard input, output and error.
    init(_ arguments: [String], executable: URL? = nil, environment: [String: String], in directory: URL) throws {
        var master: Int32 = 0, slave: Int32 = 0
        var size = winsize(ws_row: 40, ws_col: 120, ws_xpixel: 0, ws_ypixel: 0)
        guard openpty(&master, &slave, nil, nil, &size) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        self.master = master
        let terminal = FileHandle(fileDescriptor: slave, closeOnDealloc: false)
        process.executableURL = try executable ?? BuiltExecutable.url()
        process.arguments = arguments
        process.environment = environment
        process.currentDirectoryURL = directory
        process.standardInput = terminal
        process.standardOutput = terminal
        process.standardError = terminal
        try process.run()
        close(slave)  // the child holds it; the master then reads EOF/EIO once the child is gone
        let collected = self.collected, done = readerDone, masterEnd = master
        Thread.detachNewThread {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let n = read(masterEnd, &buffer, buffer.count)
                if n > 0 {
                    collected.bytes.withLock { $0 += buffer[..<n] }
                } else if n < 0 && errno == EINTR {
                    continue
                } else {
                    break
                }
            }
            done.signal()
        }
    }

    deinit {
        if process.isRunning { process.terminate() }
        close(master)
    }

    /// Everything drawn so far, with carriage returns removed.
    var output: String {
        String(decoding: collected.bytes.withLock { $0 }, as: UTF8.self).replacingOccurrences(of: "\r", with: "")
    }

    /// Types `text` (bytes as given: escape sequences and control keys included).
    func type(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
    }

    /// Sends `signal` to the program.
    func send(signal number: Int32) {
        kill(process.processIdentifier, number)
    }

    /// The terminal's local modes (`c_lflag`: ICANON, ECHO, ISIG, …) as the program left them
    /// (on Linux the master side reports the terminal's settings).
    func localModes() throws -> tcflag_t {
        var settings = termios()
        guard tcgetattr(master, &settings) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        return settings.c_lflag
    }

    /// Whether the program ended by a signal (then ``finish(timeout:)`` returned its number).
    var endedBySignal: Bool { process.terminationReason == .uncaughtSignal }

    /// Waits until the output holds `text` `occurrences` times; returns the output.
    @discardableResult
    func waitFor(_ text: String, occurrences: Int = 1, timeout: Duration = .seconds(120)) throws -> String {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let now = output
            if now.components(separatedBy: text).count - 1 >= occurrences { return now }
            usleep(2_000)  // polling interval for a condition, not a wait for time to pass
        }
        throw TimedOut(waitingFor: text, output: output)
    }

    /// Waits for the program to end; returns its exit status.
    func finish(timeout: Duration = .seconds(120)) throws -> Int32 {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            guard ContinuousClock.now < deadline else { throw TimedOut(waitingFor: "exit", output: output) }
            usleep(2_000)
        }
        _ = readerDone.wait(timeout: .now() + 10)
        return process.terminationStatus
    }
}
