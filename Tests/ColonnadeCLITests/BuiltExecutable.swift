import Foundation

/// Finds and runs the `colonnade` executable that `swift build` (or `swift test`) put beside
/// the test bundle, so end-to-end tests exercise the real process: exit statuses, signals, pipes.
enum BuiltExecutable {
    struct NotFound: Error, CustomStringConvertible {
        var searched: [String]
        var description: String {
            "the built 'colonnade' executable was not found (run 'swift build' first, or set "
                + "COLONNADE_EXECUTABLE); searched: \(searched.joined(separator: ", "))"
        }
    }

    /// The executable's location: `$COLONNADE_EXECUTABLE` if set, else the first `colonnade`
    /// found in the test bundle's directory or its parents (`.build/debug/` on Linux, where
    /// the bundle is `.build/debug/ColonnadePackageTests.xctest`; up from
    /// `….xctest/Contents/MacOS/` on macOS).
    static func url() throws -> URL {
        let environment = ProcessInfo.processInfo.environment
        if let explicit = environment["COLONNADE_EXECUTABLE"], !explicit.isEmpty {
            return URL(fileURLWithPath: explicit)
        }
        var starts = [Bundle.main.bundleURL, Bundle.main.executableURL?.deletingLastPathComponent()]
        starts.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent())
        if let link = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            starts.append(URL(fileURLWithPath: link).deletingLastPathComponent())
        }
        var searched: [String] = []
        for start in starts.compactMap({ $0?.standardizedFileURL }) {
            var directory = start
            for _ in 0 ..< 5 {
                let candidate = directory.appendingPathComponent("colonnade")
                if !searched.contains(candidate.path) { searched.append(candidate.path) }
                var isDirectory: ObjCBool = false
                if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDirectory), !isDirectory.boolValue,
                    FileManager.default.isExecutableFile(atPath: candidate.path)
                {
                    return candidate
                }
                directory.deleteLastPathComponent()
            }
        }
        throw NotFound(searched: searched)
    }

    /// The path of a test helper executable built beside `colonnade` (`SnapshotCrashWriter`).
    static func sibling(_ name: String) throws -> String {
        try url().deletingLastPathComponent().appendingPathComponent(name).path
    }

    /// `colonnade-transfer`, the program `fetch` sends its requests from, built beside
    /// `colonnade`.
    static func transfer() throws -> String {
        let path = try sibling("colonnade-transfer")
        guard FileManager.default.isExecutableFile(atPath: path) else { throw NotFound(searched: [path]) }
        return path
    }

    /// What one run of the executable produced.
    struct Result {
        var status: Int32
        var terminatedBySignal: Bool
        var standardOutput: String
        var standardError: String
    }

    /// Runs `colonnade arguments` to completion with standard input empty (or read from
    /// `standardInput`, a file).
    ///
    /// Standard error goes to a temporary file rather than a second pipe, so a chatty child
    /// cannot fill one pipe while the test blocks reading the other.
    ///
    /// - Parameters:
    ///   - executable: Another program to run the same way (a test helper built beside it);
    ///     `nil` runs `colonnade`.
    ///   - environment: The child's whole environment; `nil` inherits the test process's.
    ///   - currentDirectory: The child's working directory; `nil` inherits the test process's.
    static func run(
        executable: String? = nil, _ arguments: [String], environment: [String: String]? = nil, currentDirectory: URL? = nil,
        standardInput: URL? = nil
    ) throws -> Result {
        let (process, output, errorFile) = try launch(
            arguments, executable: executable, environment: environment, currentDirectory: currentDirectory,
            standardInput: standardInput)
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus,
            terminatedBySignal: process.terminationReason == .uncaughtSignal,
            standardOutput: String(decoding: data, as: UTF8.self),
            standardError: try errorFile.contents())
    }

    /// Runs `colonnade arguments`, reads standard output up to the first line feed, closes the
    /// pipe's read end as `head -1` would, and waits (at most `timeout`) for the process to end.
    static func runReadingOneLine(
        _ arguments: [String], environment: [String: String]? = nil,
        timeout: Duration = .seconds(20)
    ) throws -> (firstLine: String, result: Result) {
        let (process, output, errorFile) = try launch(arguments, environment: environment, currentDirectory: nil)
        // The parent's copy of the write end would otherwise keep the pipe open.
        try? output.fileHandleForWriting.close()

        var received = Data()
        while !received.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            received.append(chunk)
        }
        try output.fileHandleForReading.close()

        let deadline = ContinuousClock.now + timeout
        while process.isRunning, ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.01)
        }
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
            throw TimedOut(arguments: arguments)
        }
        process.waitUntilExit()
        let firstLine = String(decoding: received.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
        return (
            firstLine,
            Result(
                status: process.terminationStatus,
                terminatedBySignal: process.terminationReason == .uncaughtSignal,
                standardOutput: "", standardError: try errorFile.contents())
        )
    }

    /// Starts the executable: standard input empty, standard output a pipe, standard error a
    /// temporary file.
    private static func launch(
        _ arguments: [String], executable: String? = nil, environment: [String: String]? = nil,
        currentDirectory: URL? = nil, standardInput: URL? = nil
    ) throws -> (Process, Pipe, TemporaryFile) {
        let process = Process()
        process.executableURL = try executable.map { URL(fileURLWithPath: $0) } ?? url()
        process.arguments = arguments
        if let environment { process.environment = environment }
        if let currentDirectory { process.currentDirectoryURL = currentDirectory }
        process.standardInput = try standardInput.map { try FileHandle(forReadingFrom: $0) } ?? FileHandle.nullDevice
        let output = Pipe()
        process.standardOutput = output
        let errorFile = try TemporaryFile()
        process.standardError = errorFile.handle
        try process.run()
        return (process, output, errorFile)
    }

    struct TimedOut: Error {
        var arguments: [String]
    }

    /// A file in the temporary directory, removed when released.
    private final class TemporaryFile {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("colonnade-stderr-\(UUID())")
        let handle: FileHandle

        init() throws {
            guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
            }
            handle = try FileHandle(forWritingTo: url)
        }

        func contents() throws -> String {
            try String(contentsOf: url, encoding: .utf8)
        }

        deinit {
            try? handle.close()
            try? FileManager.default.removeItem(at: url)
        }
    }
}
