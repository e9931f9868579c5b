import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A started `colonnade` process that a test can watch while it runs: for tests with two
/// processes at once (the snapshot write lock) and for runs that must end by themselves (a FIFO
/// must never block). Standard input is empty, standard output is drained on a thread of its own
/// (so a chatty child never blocks on a full pipe), standard error goes to a file that can be
/// read at any time.
final class RunningExecutable: @unchecked Sendable {
    // Safe: `collected` is only touched under `lock`; the rest is set once in init.
    let process: Process
    private let errorURL: URL
    private let errorHandle: FileHandle
    private let lock = NSLock()
    private var collected = Data()
    private let drained = DispatchSemaphore(value: 0)

    /// Starts `colonnade arguments` (or `executable arguments`) in `directory` with `environment`.
    init(_ arguments: [String], environment: [String: String], in directory: URL, executable: String? = nil) throws {
        process = Process()
        process.executableURL = try executable.map(URL.init(fileURLWithPath:)) ?? BuiltExecutable.url()
        process.arguments = arguments
        process.environment = environment
        process.currentDirectoryURL = directory
        process.standardInput = FileHandle.nullDevice
        let output = Pipe()
        process.standardOutput = output
        errorURL = FileManager.default.temporaryDirectory.appendingPathComponent("colonnade-stderr-\(UUID())")
        guard FileManager.default.createFile(atPath: errorURL.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: errorURL.path])
        }
        errorHandle = try FileHandle(forWritingTo: errorURL)
        process.standardError = errorHandle
        try process.run()
        try? output.fileHandleForWriting.close()
        let reader = output.fileHandleForReading
        Thread.detachNewThread { [self] in
            while true {
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                lock.withLock { collected.append(chunk) }
            }
            drained.signal()
        }
    }

    deinit {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? errorHandle.close()
        try? FileManager.default.removeItem(at: errorURL)
    }

    /// The process's PID.
    var pid: Int32 { process.processIdentifier }

    /// What the process has written to standard error so far.
    var standardError: String {
        String(decoding: (try? Data(contentsOf: errorURL)) ?? Data(), as: UTF8.self)
    }

    struct StillRunning: Error, CustomStringConvertible {
        var arguments: [String]
        var standardError: String
        var description: String { "colonnade \(arguments.joined(separator: " ")) did not end; stderr: \(standardError)" }
    }

    /// Waits until `condition` holds or the process has ended, polling; false if `timeout` passed
    /// first. The timeout only bounds a failing test: a passing one never waits that long.
    func wait(until condition: () -> Bool, timeout: Duration = .seconds(60)) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition() { return true }
            if !process.isRunning { return condition() }
            Thread.sleep(forTimeInterval: 0.005)
        }
        return false
    }

    /// Waits for the process to end and returns what it did; if it has not ended within `timeout`
    /// it is killed and ``StillRunning`` is thrown.
    func finish(timeout: Duration = .seconds(60)) throws -> BuiltExecutable.Result {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning && ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.005) }
        if process.isRunning {
            kill(pid, SIGKILL)
            process.waitUntilExit()
            throw StillRunning(arguments: process.arguments ?? [], standardError: standardError)
        }
        process.waitUntilExit()
        drained.wait()
        drained.signal()
        return BuiltExecutable.Result(
            status: process.terminationStatus,
            terminatedBySignal: process.terminationReason == .uncaughtSignal,
            standardOutput: String(decoding: lock.withLock { collected }, as: UTF8.self),
            standardError: standardError)
    }
}
