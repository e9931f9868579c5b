import Foundation
import Testing
@testable import ColonnadeCLI

@Suite struct FileDescriptorWriterTests {
    @Test func writesMoreThanOneBufferToAFileExactly() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("colonnade-writer-\(UUID()).txt").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try FileDescriptorWriter(creatingFileAt: path, bufferCapacity: 1_000)
        var expected = ""
        for line in 0 ..< 5_000 {
            let text = "row \(line) — ü\n"
            expected += text
            try writer.write(text)
        }
        try writer.close()
        #expect(try String(contentsOfFile: path, encoding: .utf8) == expected)
    }

    /// The file at the path changes only at `close()`, all at once, keeping its mode; a writer
    /// dropped before (an error while exporting) leaves the old file and no temporary.
    @Test func aFileIsReplacedWholeAtCloseOrNotAtAll() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("colonnade-writer-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/out.csv"
        try Data("old contents\n".utf8).write(to: URL(fileURLWithPath: path))
        #expect(chmod(path, 0o600) == 0)
        do {
            let abandoned = try FileDescriptorWriter(creatingFileAt: path, bufferCapacity: 4)
            try abandoned.write("half of a new file\n")
            try abandoned.flush()
            #expect(try String(contentsOfFile: path, encoding: .utf8) == "old contents\n")
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "old contents\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["out.csv"])
        let writer = try FileDescriptorWriter(creatingFileAt: path, bufferCapacity: 4)
        try writer.write("new contents\n")
        try writer.flush()
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "old contents\n")
        try writer.close()
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "new contents\n")
        var st = stat()
        #expect(stat(path, &st) == 0 && st.st_mode & 0o7777 == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["out.csv"])
    }

    @Test func closedPipeBecomesBrokenPipeAndStaysBroken() throws {
        signal(SIGPIPE, SIG_IGN)  // as runColonnade does; otherwise the test process would die
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        close(ends[0])
        defer { close(ends[1]) }
        let writer = FileDescriptorWriter(fileDescriptor: ends[1], destination: "pipe")
        try writer.write("buffered, not yet written\n")
        #expect(throws: OutputError.brokenPipe) { try writer.flush() }
        #expect(throws: OutputError.brokenPipe) { try writer.write("more") }
    }

    @Test func fullDeviceIsAWriteFailureNamingTheDestination() throws {
        let descriptor = open("/dev/full", O_WRONLY)
        try #require(descriptor >= 0, "/dev/full is Linux-only")
        defer { close(descriptor) }
        let writer = FileDescriptorWriter(fileDescriptor: descriptor, destination: "standard output", bufferCapacity: 0)
        #expect(throws: OutputError.writeFailed(destination: "standard output", errno: ENOSPC)) {
            try writer.write("x")
        }
        #expect(
            ErrorReport(OutputError.writeFailed(destination: "standard output", errno: ENOSPC)).message
                == "cannot write to standard output: No space left on device")
    }

    @Test func uncreatableFileIsReportedWithItsPath() {
        #expect(throws: OutputError.cannotOpen(path: "/nonexistent-dir/x.csv", errno: ENOENT)) {
            _ = try FileDescriptorWriter(creatingFileAt: "/nonexistent-dir/x.csv")
        }
    }
}
