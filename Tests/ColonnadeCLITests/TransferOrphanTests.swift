import Colonnade
import ColonnadeTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

@testable import ColonnadeCLI

/// `colonnade fetch` runs each request in a `colonnade-transfer` child. When the parent dies
/// without a word (SIGKILL: no handler runs, nothing is cleaned up), the child must end too —
/// not wait on a server that never answers (it once kept running, orphaned, for the request's
/// day-long timeout).
///
/// Seen from the server: the child alone holds the connection (the parent only reads its pipe),
/// so the connection closes when, and only when, the child ends. Nothing here reads /proc: a CI
/// machine whose /proc showed no such child by its number failed an earlier version.
@Suite struct TransferOrphanTests {
    /// What the run saw, in order.
    struct Outcome: Sendable {
        var requested = false
        var heldBeforeTheKill = false
        var closedAfterTheKill = false
        var parentSeenEnded = false
        var started: String?
    }

    @Test func aTransferChildEndsWhenItsParentIsKilled() async throws {
        let scratch = try Scratch()
        let executable = try BuiltExecutable.url()
        let server = try LoopbackHTTPServer { _ in .hang }
        defer { server.stop() }
        // On a thread of its own, not the cooperative pool: in a full test run the pool's two
        // threads can be held by other tests for minutes, longer than the client's 60 s stall
        // timeout, after which the connection would close without any kill.
        let outcome: Outcome = await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: Self.killTheParentWhileItsChildWaits(server, scratch, executable)) }
            thread.name = "TransferOrphanTests"
            thread.start()
        }
        #expect(outcome.started == nil, "\(outcome.started ?? "")")
        #expect(outcome.requested, "no request")
        #expect(outcome.heldBeforeTheKill, "the connection closed before the parent was killed")
        #expect(outcome.closedAfterTheKill, "the orphaned transfer process still holds its connection 120 s after its parent was killed")
        // Foundation sees its child end when a socket the child inherited closes; a transfer
        // child that inherited it too (no close-from at spawn) hid the parent's end for as long
        // as it ran.
        #expect(outcome.parentSeenEnded, "the killed parent's end was not seen 120 s later")
        #expect(scratch.bytes("quotes.snapshot") == nil, "nothing was saved")
    }

    /// Starts `fetch` against `server`, waits for its request, checks the connection is held,
    /// SIGKILLs the parent and waits (hang guards only) for the connection to close.
    static func killTheParentWhileItsChildWaits(_ server: LoopbackHTTPServer, _ scratch: Scratch, _ executable: URL) -> Outcome {
        var outcome = Outcome()
        let process = Process()
        process.executableURL = executable
        process.arguments = [
            "fetch", "AAPL", "--format", "csv", "--base-url", server.baseURL.absoluteString, "--snapshot", scratch.snapshot,
        ]
        // The child named outright, whatever /proc/self/exe is on this machine.
        process.environment = [
            "HOME": scratch.path, "NASDAQ_DATA_LINK_API_KEY": fetchTestKey,
            FetchCommand.transferExecutableVariable: executable.deletingLastPathComponent().appendingPathComponent("colonnade-transfer")
                .path,
        ]
        process.currentDirectoryURL = URL(fileURLWithPath: scratch.path)
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            outcome.started = "\(error)"
            return outcome
        }
        defer { if process.isRunning { process.terminate() } }
        func poll(for limit: Duration, until condition: () -> Bool) -> Bool {
            let deadline = ContinuousClock.now + limit
            while !condition() {
                if ContinuousClock.now > deadline { return false }
                Thread.sleep(forTimeInterval: 0.005)
            }
            return true
        }
        // The request reached the server, so the child that sent it is waiting for an answer.
        outcome.requested = poll(for: .seconds(120)) { !server.requests.isEmpty }
        guard outcome.requested else { return outcome }
        outcome.heldBeforeTheKill = !poll(for: .milliseconds(200)) { server.isIdle }
        kill(process.processIdentifier, SIGKILL)
        // A hang guard only: the child ends as soon as it sees that nothing reads its pipe.
        outcome.closedAfterTheKill = poll(for: .seconds(120)) { server.isIdle }
        outcome.parentSeenEnded = poll(for: .seconds(120)) { !process.isRunning }
        return outcome
    }
}
