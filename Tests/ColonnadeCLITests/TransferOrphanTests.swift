import Colonnade
import ColonnadeTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `colonnade fetch` runs each request in a `colonnade _transfer` child. When the parent dies
/// without a word (SIGKILL: no handler runs, nothing is cleaned up), the child must end too —
/// not wait on a server that never answers (it once kept running, orphaned, for the request's
/// day-long timeout).
@Suite struct TransferOrphanTests {
    @Test func aTransferChildEndsWhenItsParentIsKilled() async throws {
        let scratch = try Scratch()
        try await LoopbackHTTPServer.run({ _ in .hang }) { server in
            let process = Process()
            process.executableURL = try BuiltExecutable.url()
            process.arguments = [
                "fetch", "AAPL", "--format", "csv", "--base-url", server.baseURL.absoluteString, "--snapshot", scratch.snapshot,
            ]
            process.environment = ["HOME": scratch.path, "NASDAQ_DATA_LINK_API_KEY": fetchTestKey]
            process.currentDirectoryURL = URL(fileURLWithPath: scratch.path)
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            defer { if process.isRunning { process.terminate() } }

            // The request reached the server, so the child that sent it is waiting for an answer.
            #expect(await server.waitForRequests(1, timeout: .seconds(120)), "no request")
            let children = Self.transferChildren(of: process.processIdentifier)
            #expect(children.count == 1, "transfer children: \(children)")
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()

            // A hang guard only: the child ends as soon as it sees that nothing reads its pipe.
            let clock = ContinuousClock()
            let killed = clock.now
            while children.contains(where: Self.isRunning), clock.now - killed < .seconds(120) {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(!children.contains(where: Self.isRunning), "the orphaned transfer process still runs 120 s after its parent was killed")
            for child in children where Self.isRunning(child) { kill(child, SIGKILL) }
        }
        #expect(scratch.bytes("quotes.snapshot") == nil, "nothing was saved")
    }

    /// The processes whose parent is `parent` and whose command line names `_transfer` (/proc).
    static func transferChildren(of parent: Int32) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { Int32($0) }.filter { pid in
            guard let stat = statFields(pid), stat.count > 1, Int32(stat[1]) == parent,
                let command = procFile("/proc/\(pid)/cmdline")
            else { return false }
            return command.split(separator: 0).contains { String(decoding: $0, as: UTF8.self) == "_transfer" }
        }
    }

    /// Whether `pid` still runs: gone, or a zombie nobody has reaped yet, counts as ended.
    static func isRunning(_ pid: Int32) -> Bool {
        guard let state = statFields(pid)?.first else { return false }
        return state != "Z" && state != "X"
    }

    /// The fields of /proc/PID/stat after the command name: state, parent, ….
    static func statFields(_ pid: Int32) -> [String]? {
        guard let data = procFile("/proc/\(pid)/stat") else { return nil }
        let text = String(decoding: data, as: UTF8.self)
        guard let close = text.lastIndex(of: ")") else { return nil }
        return text[text.index(after: close)...].split(separator: " ").map(String.init)
    }

    /// A /proc file read to its end (they report a size of 0, so it is read, not sized).
    static func procFile(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n > 0 {
                bytes += buffer[0 ..< n]
            } else if n == 0 {
                return bytes
            } else if errno != EINTR {
                return nil
            }
        }
    }
}
