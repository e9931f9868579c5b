import Colonnade
import ColonnadeTestSupport
import Foundation
import Synchronization
import Testing

/// Ctrl-C during `colonnade fetch`: the built process, a server that never answers, SIGINT.
@Suite struct FetchCancellationTests {
    @Test func interruptEndsPromptlyAndLeavesTheSnapshotAlone() async throws {
        let scratch = try Scratch()
        let before = try await makeSnapshot(in: scratch)
        try await LoopbackHTTPServer.run({ _ in .hang }) { server in
            let process = Process()
            process.executableURL = try BuiltExecutable.url()
            process.arguments = [
                "fetch", "AAPL", "MSFT", "--concurrency", "2", "--debug",
                "--base-url", server.baseURL.absoluteString, "--snapshot", scratch.snapshot,
            ]
            process.environment = ["HOME": scratch.path, "NASDAQ_DATA_LINK_API_KEY": fetchTestKey]
            process.currentDirectoryURL = URL(fileURLWithPath: scratch.path)
            process.standardInput = FileHandle.nullDevice
            let errorPath = scratch.file("stderr.txt")
            _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
            let errorHandle = try FileHandle(forWritingTo: URL(fileURLWithPath: errorPath))
            defer { try? errorHandle.close() }
            process.standardError = errorHandle
            process.standardOutput = errorHandle
            try process.run()
            defer { if process.isRunning { process.terminate() } }

            // Both requests are in flight (so the signal handler is installed) before the signal.
            #expect(await server.waitForRequests(2))
            let clock = ContinuousClock()
            let sent = clock.now
            kill(process.processIdentifier, SIGINT)
            while process.isRunning, clock.now - sent < .seconds(120) {
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(!process.isRunning, "still running 120 s after SIGINT")
            guard !process.isRunning else { return }
            process.waitUntilExit()

            // Promptly, without timing it: the server never answers, so only the cancellation
            // can have ended the process, and it says so.
            #expect(process.terminationReason == .exit, "handled SIGINT rather than died of it")
            #expect(process.terminationStatus == 1)
            let output = String(decoding: FileManager.default.contents(atPath: errorPath) ?? Data(), as: UTF8.self)
            #expect(output.contains("error: cancelled"), "\(output)")
            #expect(!output.contains(fetchTestKey))
            #expect(scratch.bytes("quotes.snapshot") == before)
            // The client hung up on the server.
            #expect(await server.waitUntilIdle(timeout: .seconds(30)))
        }
    }

    /// Ctrl-C in the middle of a `--bulk` download: the built process exits promptly, the
    /// temporary zip beside the snapshot is removed, and the snapshot is untouched.
    @Test func interruptDuringABulkDownloadRemovesTheTemporaryZip() async throws {
        let scratch = try Scratch()
        let before = try await makeSnapshot(in: scratch)
        let zip = try Data(contentsOf: Fixtures.exportDirectory.appendingPathComponent("WIKI-PRICES.export.zip"))
        try await LoopbackHTTPServer.run({ _ in
            .drip(status: 200, headers: ["Content-Type": "application/zip"], body: zip, pieces: 400, interval: 0.1)
        }) { files in
            let link = files.baseURL.absoluteString + "/export/T.zip?X-Amz-Signature=0123456789abcdef"
            let status = #"{"datatable_bulk_download":{"file":{"link":"\#(link)","status":"fresh","data_snapshot_time":null}}}"#
            try await LoopbackHTTPServer.run({ _ in .json(status) }) { api in
                let process = Process()
                process.executableURL = try BuiltExecutable.url()
                process.arguments = [
                    "fetch", "--table", "WIKI/PRICES", "--bulk",
                    "--base-url", api.baseURL.absoluteString, "--snapshot", scratch.snapshot,
                ]
                process.environment = ["HOME": scratch.path, "NASDAQ_DATA_LINK_API_KEY": fetchTestKey]
                process.currentDirectoryURL = URL(fileURLWithPath: scratch.path)
                process.standardInput = FileHandle.nullDevice
                let errorPath = scratch.file("stderr.txt")
                _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
                let errorHandle = try FileHandle(forWritingTo: URL(fileURLWithPath: errorPath))
                defer { try? errorHandle.close() }
                process.standardError = errorHandle
                process.standardOutput = errorHandle
                try process.run()
                defer { if process.isRunning { process.terminate() } }

                // The download has started (and the temporary file exists) before the signal.
                #expect(await files.waitForRequests(1))
                let clock = ContinuousClock()
                let waitStart = clock.now
                while clock.now - waitStart < .seconds(30), process.isRunning,
                    ((try? FileManager.default.contentsOfDirectory(atPath: scratch.path)) ?? []).allSatisfy({ !$0.contains(".export-") })
                {
                    try await Task.sleep(for: .milliseconds(10))
                }
                let sent = clock.now
                kill(process.processIdentifier, SIGINT)
                while process.isRunning, clock.now - sent < .seconds(120) {
                    try await Task.sleep(for: .milliseconds(10))
                }
                #expect(!process.isRunning, "still running 120 s after SIGINT")
                guard !process.isRunning else { return }
                process.waitUntilExit()
                // Promptly, without timing it: the download was cut short, not sat out.
                #expect(files.bodyBytesSent(forRequest: 0) < zip.count, "the whole zip was sent before the process ended")
                #expect(process.terminationReason == .exit)
                #expect(process.terminationStatus == 1)
                let output = String(decoding: FileManager.default.contents(atPath: errorPath) ?? Data(), as: UTF8.self)
                #expect(output.contains("cancelled"), "\(output)")
                #expect(!output.contains("0123456789abcdef"), "the link is never printed")
                #expect(scratch.bytes("quotes.snapshot") == before)
                let left = ((try? FileManager.default.contentsOfDirectory(atPath: scratch.path)) ?? []).filter { $0.contains(".export-") }
                #expect(left.isEmpty, "\(left)")
            }
        }
    }

    /// Ctrl-C while waiting for an export to become ready (the first wait between status requests
    /// is 2 s and grows; Ctrl-C must not wait for it): the process exits promptly, says so, and
    /// leaves the snapshot and its directory as they were.
    @Test func interruptWhileWaitingForTheExportEndsPromptly() async throws {
        let scratch = try Scratch()
        let before = try await makeSnapshot(in: scratch)
        let creating = #"{"datatable_bulk_download":{"file":{"link":null,"status":"creating","data_snapshot_time":null}}}"#
        // The signal is sent by a thread of its own as soon as the first answer is written (not by
        // this test's task, which a busy test run may resume seconds late): from then on the
        // process is in, or about to enter, its 2 s wait, and must not ask again.
        let interrupter = Interrupter()
        try await LoopbackHTTPServer.run({ request in
            if request.sequenceNumber == 0 { interrupter.interruptOnceAnswered(bytes: creating.utf8.count) }
            return .json(creating)
        }) { api in
            interrupter.server.withLock { $0 = api }
            let process = Process()
            process.executableURL = try BuiltExecutable.url()
            process.arguments = [
                "fetch", "--table", "WIKI/PRICES", "--bulk", "--base-url", api.baseURL.absoluteString, "--snapshot", scratch.snapshot,
            ]
            process.environment = ["HOME": scratch.path, "NASDAQ_DATA_LINK_API_KEY": fetchTestKey]
            process.currentDirectoryURL = URL(fileURLWithPath: scratch.path)
            process.standardInput = FileHandle.nullDevice
            let errorPath = scratch.file("stderr.txt")
            _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
            let errorHandle = try FileHandle(forWritingTo: URL(fileURLWithPath: errorPath))
            defer { try? errorHandle.close() }
            process.standardError = errorHandle
            process.standardOutput = errorHandle
            try process.run()
            interrupter.pid.store(process.processIdentifier, ordering: .releasing)
            defer { if process.isRunning { process.terminate() } }

            // The first status request was answered "creating", and the signal sent.
            #expect(interrupter.sent.wait(timeout: .now() + 120) == .success, "no status request")
            let clock = ContinuousClock()
            let sent = clock.now
            while process.isRunning, clock.now - sent < .seconds(120) {
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(!process.isRunning, "still running 120 s after SIGINT")
            guard !process.isRunning else { return }
            process.waitUntilExit()
            // Promptly, without timing it: the first wait between status requests is 2 s, and the
            // process asked no more after the signal (a Dispatch signal source once let it sit out
            // two more waits, >= 6 s, in a full parallel run; SignalCatcher cancels at once).
            #expect(api.requests.count == 1, "status requests after SIGINT: \(api.requests.count - 1)")
            #expect(process.terminationReason == .exit && process.terminationStatus == 1)
            let output = String(decoding: FileManager.default.contents(atPath: errorPath) ?? Data(), as: UTF8.self)
            #expect(output.contains("cancelled"), "\(output)")
        }
        #expect(scratch.bytes("quotes.snapshot") == before)
        let left = ((try? FileManager.default.contentsOfDirectory(atPath: scratch.path)) ?? []).filter { $0.contains(".export-") }
        #expect(left.isEmpty, "\(left)")
    }
}

/// Sends SIGINT to a process from a thread of its own once the loopback server has written the
/// whole first answer.
private final class Interrupter: Sendable {
    let pid = Atomic<Int32>(0)
    let server = Mutex<LoopbackHTTPServer?>(nil)
    let sent = DispatchSemaphore(value: 0)

    /// Called by the server as it answers request 0 (before writing): starts the thread.
    func interruptOnceAnswered(bytes: Int) {
        Thread { [self] in
            // Hang guards only: 120 s for the answer to be written.
            for _ in 0 ..< 120_000 {
                let written = server.withLock { $0?.bodyBytesSent(forRequest: 0) ?? 0 }
                let target = pid.load(ordering: .acquiring)
                if written >= bytes, target > 0 {
                    kill(target, SIGINT)
                    break
                }
                usleep(1_000)
            }
            sent.signal()
        }.start()
    }
}
