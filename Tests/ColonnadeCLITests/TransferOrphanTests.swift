import Colonnade
import ColonnadeTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

@testable import ColonnadeCLI

/// `colonnade fetch` runs each request in a `colonnade _transfer` child. When the parent dies
/// without a word (SIGKILL: no handler runs, nothing is cleaned up), the child must end too —
/// not wait on a server that never answers (it once kept running, orphaned, for the request's
/// day-long timeout).
///
/// Seen from the server: the child alone holds the connection (the parent only reads its pipe),
/// so the connection closes when, and only when, the child ends. Nothing here reads /proc: a CI
/// machine whose /proc shows another PID namespace found no child by its number and failed.
@Suite struct TransferOrphanTests {
    @Test func aTransferChildEndsWhenItsParentIsKilled() async throws {
        let scratch = try Scratch()
        let executable = try BuiltExecutable.url()
        try await LoopbackHTTPServer.run({ _ in .hang }) { server in
            let process = Process()
            process.executableURL = executable
            process.arguments = [
                "fetch", "AAPL", "--format", "csv", "--base-url", server.baseURL.absoluteString, "--snapshot", scratch.snapshot,
            ]
            // The child named outright, so that a request is never run in process, whatever
            // /proc/self/exe is on this machine.
            process.environment = [
                "HOME": scratch.path, "NASDAQ_DATA_LINK_API_KEY": fetchTestKey,
                FetchCommand.transferExecutableVariable: executable.path,
            ]
            process.currentDirectoryURL = URL(fileURLWithPath: scratch.path)
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            defer { if process.isRunning { process.terminate() } }

            // The request reached the server, so the child that sent it is waiting for an answer.
            #expect(await server.waitForRequests(1, timeout: .seconds(120)), "no request")
            #expect(await !server.waitUntilIdle(timeout: .milliseconds(200)), "the connection closed before the parent was killed")
            kill(process.processIdentifier, SIGKILL)

            // A hang guard only: the child ends as soon as it sees that nothing reads its pipe.
            #expect(
                await server.waitUntilIdle(timeout: .seconds(120)),
                "the orphaned transfer process still holds its connection 120 s after its parent was killed")
            // Foundation sees its child end when a socket the child inherited closes; a transfer
            // child that inherited it too (no close-from at spawn) hid the parent's end for as
            // long as it ran. Polled, not `waitUntilExit()`, so that a regression fails, not hangs.
            let clock = ContinuousClock()
            let killed = clock.now
            while process.isRunning, clock.now - killed < .seconds(120) { try await Task.sleep(for: .milliseconds(20)) }
            #expect(!process.isRunning, "the killed parent's end was not seen 120 s later")
        }
        #expect(scratch.bytes("quotes.snapshot") == nil, "nothing was saved")
    }
}
