import Colonnade
import Dispatch
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Runs each HTTP exchange in a child process, so that nothing a server sends can end the
/// caller's process or swell its memory past the response limit.
///
/// Why: swift-corelibs-foundation's libcurl glue reads `CURLINFO_CONTENT_LENGTH_DOWNLOAD` (a
/// `Double`) in its header callback and converts it with `Int64(_:)`
/// (`_EasyHandle.didReceive(headerData:size:nmemb:contentLength:)`, EasyHandle.swift): a
/// `Content-Length: 9223372036854775807` rounds to 2^63 and traps (SIGILL) on the header line
/// after it — before any delegate callback, so no URLSession client can see the header first.
/// And it hands each piece of the body to the delegate queue with `addOperation` without ever
/// waiting, so a fast server fills memory with queued pieces faster than any delegate can count
/// them.
///
/// In the child, the transfer is an ordinary URLSession data task whose delegate writes each
/// event — the response head, each piece of the body, the end — as a frame to a pipe
/// (`TransferProcessServer`, module `DataLinkURLSession`). The parent reads the pipe: it checks `Content-Length` and counts
/// the body at receipt, and ends the child (`SIGKILL`) the moment a limit is passed, a timeout or
/// the deadline fires, or the task is cancelled. The pipe is the backpressure: a child whose
/// parent does not read blocks in its delegate. The child's own memory is capped with
/// `RLIMIT_DATA` (``memoryLimit``), so FoundationNetworking's queue cannot grow past it either;
/// a child that dies by a trap while reading the header is a
/// ``DataLinkError/malformedResponse(_:reason:)``, and by its memory cap while the body streams,
/// a transport failure (retried) — never the caller's crash.
///
/// Peak memory of the caller: the limit plus one frame (at most ``maximumFrame``) over the
/// process's own baseline (measured with a 512 MiB limit, a CPU-starved client and a server
/// streaming without end: 543.7 MiB, for a baseline of 31.4 MiB); of the child: at most
/// ``memoryLimit``.
public struct TransferProcess: Sendable {
    /// The program to run: one whose `main` is `TransferProcessServer.serve(input: 0, output: 1)`
    /// (module `DataLinkURLSession`), such as `colonnade-transfer`.
    public var executable: String
    /// Its arguments (after the program name), which must make it run
    /// `TransferProcessServer.serve(input:output:)`; `colonnade-transfer` takes none.
    public var arguments: [String]
    /// `RLIMIT_DATA` of the child, in bytes (default 256 MiB: the child holds no body, only
    /// pieces in flight).
    public var memoryLimit: Int

    /// The largest body piece the child sends in one frame.
    public static let maximumFrame = 1 << 20

    /// A transfer process: `executable arguments…`.
    public init(executable: String, arguments: [String], memoryLimit: Int = 256 << 20) {
        self.executable = executable
        self.arguments = arguments
        self.memoryLimit = memoryLimit
    }

    /// Frame kinds on the pipe, child to parent: one byte, then a 4-byte big-endian length,
    /// then that many bytes. Parent to child: the request, a 4-byte big-endian length, then
    /// that many bytes of JSON.
    package enum Frame: UInt8 {
        /// The response head: JSON `{"status":…,"url":…,"headers":{name:value}}`.
        case head = 0x48  // H
        /// A piece of the body, as delivered to the child's delegate (decoded).
        case body = 0x44  // D
        /// The end: JSON `{}` on success, `{"code":…,"reason":…}` on a failure.
        case end = 0x45  // E
    }

    /// One exchange in a child process; the same contract as ``HTTPTransport``'s in-process `get`.
    func get(
        _ request: HTTPRequest, timeout: Duration, deadline: ContinuousClock.Instant, limit: Int,
        keyHeader: String?
    ) async -> Result<TransferResult, TransferFailure> {
        await run(request, keyHeader: keyHeader, timeout: timeout, deadline: deadline, sink: MemorySink(limit: limit))
    }

    /// One download streamed into `fd` in a child process; the same contract as
    /// ``HTTPTransport``'s in-process `download` (see ``DownloadWriter``).
    func download(_ request: HTTPRequest, into fd: Int32, offset: Int, timeout: Duration) async -> Result<DownloadResult, TransferFailure> {
        // No whole-request deadline for a download (a large export takes as long as it takes):
        // the idle timeout alone, as in process.
        let far = ContinuousClock.now + .seconds(100 * 365 * 86_400)
        return await run(
            request, keyHeader: nil, timeout: timeout, deadline: far, sink: DownloadSink(writer: DownloadWriter(fd: fd, offset: offset)))
    }

    private func run<Sink: ChildTransferSink>(
        _ request: HTTPRequest, keyHeader: String?, timeout: Duration,
        deadline: ContinuousClock.Instant, sink: Sink
    ) async -> Result<Sink.Output, TransferFailure> {
        var description: [String: Any] = ["url": request.url.absoluteString, "memoryLimit": memoryLimit]
        description["headers"] = request.headers
        if let keyHeader { description["keyHeader"] = keyHeader }
        guard let requestBytes = try? JSONSerialization.data(withJSONObject: description) else {
            return .failure(.urlError(code: NSURLErrorBadURL, reason: "cannot describe the request"))
        }
        let child: ChildTransfer
        switch ChildTransfer.spawn(self) {
        case .success(let c): child = c
        case .failure(let failure): return .failure(failure)
        }
        let run = ChildTransferRun(child: child, sink: sink, memoryLimit: memoryLimit, timeout: timeout, deadline: deadline)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                run.start(request: requestBytes, continuation: continuation)
            }
        } onCancel: {
            run.cancel()
        }
    }
}

/// What the parent does with a child's frames, on the reader thread only.
protocol ChildTransferSink: Sendable {
    associatedtype Output: Sendable
    /// The response head; a failure ends the child.
    func head(status: Int, headers: [String: String], url: URL?) -> TransferFailure?
    /// A body piece, counted at receipt; a failure ends the child.
    func body(_ piece: Data) -> TransferFailure?
    /// The end frame: the child's URL error, or nil when the transfer completed.
    func end(error: (code: Int, reason: String)?) -> Result<Output, TransferFailure>
}

/// Collects a body in memory, refusing an unusable `Content-Length` and stopping within one
/// frame of the limit.
final class MemorySink: ChildTransferSink, @unchecked Sendable {
    // Safe: every method runs on the one reader thread of the run, one after another.
    private let limit: Int
    private var status = 0
    private var headers: [String: String] = [:]
    private var url: URL?
    private var declared: Int?
    private var body = Data()
    private var received = 0
    private var sawHead = false

    init(limit: Int) { self.limit = limit }

    /// The capacity reserved for a body of unknown length: past glibc's largest mmap threshold
    /// (32 MiB), so the buffer is a mapping of its own from the start and grows by `mremap`
    /// without copies, and only the pages written count toward the process's memory. Grown
    /// from a small heap block instead, every outgrown buffer below 32 MiB stays in the heap
    /// (about 32 MiB more at the peak, measured). At most the limit.
    static func firstReservation(limit: Int) -> Int { min(limit, (32 << 20) + 4096) }

    func head(status: Int, headers: [String: String], url: URL?) -> TransferFailure? {
        self.status = status
        self.headers = headers
        self.url = url
        sawHead = true
        switch ContentLength.parse(headers["content-length"]) {
        case .failure(let problem):
            return .malformed(problem.reason)
        case .success(let length):
            declared = length
            if let length, length > limit { return .tooLarge(declaredLength: length, received: nil) }
            if let length { body.reserveCapacity(length) }
            return nil
        }
    }

    func body(_ piece: Data) -> TransferFailure? {
        // Counted at receipt: the body held never passes the limit, and reading stops (the
        // child is ended) within one frame of it.
        received += piece.count
        if received > limit { return .tooLarge(declaredLength: nil, received: received) }
        if declared == nil, body.isEmpty { body.reserveCapacity(Self.firstReservation(limit: limit)) }
        body.append(piece)
        return nil
    }

    func end(error: (code: Int, reason: String)?) -> Result<TransferResult, TransferFailure> {
        if let error {
            if error.code == NSURLErrorCancelled { return .failure(.cancelled) }
            return .failure(.urlError(code: error.code, reason: error.reason))
        }
        guard sawHead else { return .failure(.urlError(code: NSURLErrorBadServerResponse, reason: "no HTTP response")) }
        if let declared, headers["content-encoding"] == nil, body.count < declared {
            return .failure(
                .urlError(code: NSURLErrorNetworkConnectionLost, reason: "body cut off after \(body.count) of \(declared) bytes"))
        }
        return .success(TransferResult(status: status, headers: headers, body: body, url: url))
    }
}

/// Streams a download into its file (see ``DownloadWriter``).
final class DownloadSink: ChildTransferSink, @unchecked Sendable {
    // Safe: every method runs on the one reader thread of the run, one after another.
    private var writer: DownloadWriter

    init(writer: DownloadWriter) { self.writer = writer }

    func head(status: Int, headers: [String: String], url: URL?) -> TransferFailure? {
        writer.begin(status: status, headers: headers)
    }

    func body(_ piece: Data) -> TransferFailure? {
        writer.write(piece) ? nil : writer.failure
    }

    func end(error: (code: Int, reason: String)?) -> Result<DownloadResult, TransferFailure> {
        writer.finish(error: error)
    }
}

/// A spawned child: its PID and the two pipe ends the parent keeps. Killed at most once, and
/// only before it is reaped (a reaped PID may belong to another process).
final class ChildTransfer: Sendable {
    let pid: pid_t
    let input: Int32
    let output: Int32
    /// The wait status once reaped.
    private let reaped = Mutex<Int32?>(nil)

    private init(pid: pid_t, input: Int32, output: Int32) {
        self.pid = pid
        self.input = input
        self.output = output
    }

    /// Held from creating the pipes until they are close-on-exec and the child has its copies:
    /// a child spawned meanwhile by another request would inherit them, and keep a pipe open
    /// after its own child ended (its parent would then wait for an end that does not come).
    private static let spawning = Mutex(())

    static func spawn(_ process: TransferProcess) -> Result<ChildTransfer, TransferFailure> {
        spawning.withLock { _ in spawnLocked(process) }
    }

    private static func spawnLocked(_ process: TransferProcess) -> Result<ChildTransfer, TransferFailure> {
        var toChild: [Int32] = [0, 0], fromChild: [Int32] = [0, 0]
        // `pipe2` is not in the Glibc module; close-on-exec right after (the child gets its ends
        // through dup2, which clears the flag on the copies).
        guard pipe(&toChild) == 0 else { return .failure(spawnFailure(errno)) }
        guard pipe(&fromChild) == 0 else {
            let code = errno
            close(toChild[0])
            close(toChild[1])
            return .failure(spawnFailure(code))
        }
        for fd in toChild + fromChild { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        // 1 MiB of pipe (Linux's F_SETPIPE_SZ, 1031) instead of 64 KiB: the child's delegate
        // blocks less often while this process is behind, so less piles up inside its
        // FoundationNetworking. Best effort: a smaller pipe only means more waiting.
        _ = fcntl(fromChild[0], 1031, Int32(1 << 20))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, toChild[0], 0)
        posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1)
        // A trap's report ("Fatal error: …") is the child's business, not the user's terminal's.
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        // Nothing else: a descriptor this process inherited without close-on-exec (a caller's
        // pipe, the socket by which Foundation's `Process` sees its child end) would otherwise
        // stay open in the child, and whoever waits for it to close would wait for the child too.
        _ = Self.addCloseFrom?(&actions, 3)
        let argv = [process.executable] + process.arguments
        var cArguments: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { for p in cArguments { free(p) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, process.executable, &actions, nil, &cArguments, environ)
        close(toChild[0])
        close(fromChild[1])
        guard result == 0 else {
            close(toChild[1])
            close(fromChild[0])
            return .failure(spawnFailure(result))
        }
        return .success(ChildTransfer(pid: pid, input: toChild[1], output: fromChild[0]))
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), looked up at run
    /// time: the Glibc module does not import it (it is a GNU extension). Nil on an older C
    /// library, where the child then inherits whatever this process holds without close-on-exec.
    private static let addCloseFrom: AddCloseFrom? = {
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: AddCloseFrom.self)
    }()
    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32

    private static func spawnFailure(_ code: Int32) -> TransferFailure {
        .urlError(code: NSURLErrorCannotConnectToHost, reason: "cannot start the transfer process: \(String(cString: strerror(code)))")
    }

    /// Ends the child now (no-op once it was reaped).
    func kill() {
        reaped.withLock { reaped in
            if reaped == nil { _ = Glibc.kill(pid, SIGKILL) }
        }
    }

    /// Whether the child has ended (without reaping it: `WNOWAIT`).
    func hasEnded() -> Bool {
        if reaped.withLock({ $0 }) != nil { return true }
        var info = siginfo_t()
        return waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_signo != 0
    }

    /// Closes the parent's end of the pipe and waits for the child to end; its wait status.
    /// Only the reader thread calls it; a second call returns the first one's status.
    func reap() -> Int32 {
        if let status = reaped.withLock({ $0 }) { return status }
        close(output)
        var status: Int32 = 0
        _ = SystemCall.retryingOnInterrupt { waitpid(pid, &status, 0) }
        reaped.withLock { $0 = status }
        return status
    }
}

/// One exchange with a child: a reader thread for the pipe (handing frames to the sink), a
/// watchdog for the timeouts.
final class ChildTransferRun<Sink: ChildTransferSink>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Result<Sink.Output, TransferFailure>, Never>?
        var failure: TransferFailure?
        var cancelled = false
        var lastActivity = ContinuousClock.now
        var watchdog: WatchdogTimer?
    }

    private let child: ChildTransfer
    private let sink: Sink
    private let memoryLimit: Int
    private let timeout: Duration
    private let deadline: ContinuousClock.Instant
    private let state = Mutex(State())

    init(child: ChildTransfer, sink: Sink, memoryLimit: Int, timeout: Duration, deadline: ContinuousClock.Instant) {
        self.child = child
        self.sink = sink
        self.memoryLimit = memoryLimit
        self.timeout = timeout
        self.deadline = deadline
    }

    func start(request: Data, continuation: CheckedContinuation<Result<Sink.Output, TransferFailure>, Never>) {
        let watchdog = WatchdogTimer { [weak self] in self?.checkTimeouts() }
        let cancelled = state.withLock { state in
            state.continuation = continuation
            state.watchdog = watchdog
            return state.cancelled
        }
        if cancelled { child.kill() }
        // The request goes in whole before the child starts reading its answer: it is small
        // (the URL and headers), well under a pipe's buffer. Its length first, so the child
        // reads exactly that much and never waits for an end of file.
        let n = request.count
        let prefixed =
            Data([
                UInt8(truncatingIfNeeded: n >> 24), UInt8(truncatingIfNeeded: n >> 16),
                UInt8(truncatingIfNeeded: n >> 8), UInt8(truncatingIfNeeded: n),
            ]) + request
        // A failed write shows as the child's own failure to read the request.
        _ = prefixed.withUnsafeBytes { SystemCall.writeAll(child.input, $0.baseAddress, $0.count) }
        close(child.input)
        let thread = Thread { [self] in finish(read()) }
        thread.name = "DataLink.transfer-process"
        thread.start()
        watchdog.fire(after: nextCheck())
    }

    func cancel() {
        state.withLock { $0.cancelled = true }
        child.kill()
    }

    private func fail(_ failure: TransferFailure) {
        state.withLock { state in
            if state.failure == nil { state.failure = failure }
        }
        child.kill()
    }

    private func nextCheck() -> Duration {
        let idleEnd = state.withLock { $0.lastActivity } + timeout
        return min(idleEnd, deadline) - ContinuousClock.now
    }

    private func checkTimeouts() {
        let now = ContinuousClock.now
        let (failure, rearm) = state.withLock { state -> (TransferFailure?, Bool) in
            guard state.failure == nil, !state.cancelled, state.continuation != nil else { return (nil, false) }
            if now >= deadline { return (.deadline, false) }
            if now >= state.lastActivity + timeout { return (.urlError(code: NSURLErrorTimedOut, reason: "timed out"), false) }
            return (nil, true)
        }
        if let failure { fail(failure) }
        if rearm { state.withLock { $0.watchdog }?.fire(after: nextCheck()) }
    }

    /// On the reader thread: frames until the end frame or the pipe's end.
    private func read() -> Result<Sink.Output, TransferFailure> {
        var sawHead = false
        while let (kind, payload) = readFrame() {
            state.withLock { $0.lastActivity = .now }
            let refusal: TransferFailure?
            switch kind {
            case .head:
                sawHead = true
                let object = (try? JSONSerialization.jsonObject(with: payload) as? [String: Any]) ?? [:]
                var headers: [String: String] = [:]
                for (name, value) in object["headers"] as? [String: String] ?? [:] { headers[name.lowercased()] = value }
                refusal = sink.head(
                    status: object["status"] as? Int ?? 0, headers: headers,
                    url: (object["url"] as? String).flatMap(URL.init(string:)))
            case .body:
                refusal = sink.body(payload)
            case .end:
                let object = (try? JSONSerialization.jsonObject(with: payload) as? [String: Any]) ?? [:]
                let error = (object["code"] as? Int).map { (code: $0, reason: object["reason"] as? String ?? "failed") }
                return sink.end(error: error)
            }
            if let refusal {
                fail(refusal)
                return .failure(refusal)
            }
        }
        // The pipe ended without an end frame: the child died (or was ended by us).
        let wait = child.reap()
        if let failure = state.withLock({ $0.failure }) { return .failure(failure) }
        if state.withLock({ $0.cancelled }) { return .failure(.cancelled) }
        let signal = wait & 0x7F
        if signal != 0 {
            let name = signal == SIGILL ? " (SIGILL)" : signal == SIGTRAP ? " (SIGTRAP)" : signal == SIGABRT ? " (SIGABRT)" : ""
            // Before the head, the child died reading the header: FoundationNetworking's trap on
            // a Content-Length near 2^63 (its header callback runs before any delegate). After
            // it, while the body streamed: its memory cap (pieces queued inside
            // FoundationNetworking faster than they were sent on), a transport failure to retry.
            guard sawHead else {
                return .failure(
                    .malformed(
                        "the process running the transfer ended by signal \(signal)\(name) while reading the "
                            + "response's header (FoundationNetworking traps on some headers, such as a Content-Length near 2^63)"))
            }
            return .failure(
                .urlError(
                    code: NSURLErrorNetworkConnectionLost,
                    reason: "the process running the transfer ended by signal "
                        + "\(signal)\(name) while the body arrived (past its memory cap of \(memoryLimit >> 20) MiB?)"))
        }
        return .failure(
            .urlError(
                code: NSURLErrorCannotConnectToHost,
                reason: "the transfer process exited with status \((wait >> 8) & 0xFF) without an answer"))
    }

    /// One frame, or nil at the pipe's end (or on a frame no child of ours writes).
    private func readFrame() -> (TransferProcess.Frame, Data)? {
        var header = [UInt8](repeating: 0, count: 5)
        guard readExactly(&header, count: 5), let kind = TransferProcess.Frame(rawValue: header[0]) else { return nil }
        let length = Int(header[1]) << 24 | Int(header[2]) << 16 | Int(header[3]) << 8 | Int(header[4])
        guard length <= TransferProcess.maximumFrame else { return nil }
        var payload = [UInt8](repeating: 0, count: length)
        guard readExactly(&payload, count: length) else { return nil }
        return (kind, Data(payload))
    }

    /// Reads `count` bytes; false at the pipe's end, or once the child has ended and nothing
    /// more is in the pipe (another process that inherited the write end — spawned by someone
    /// else between `pipe` and `fcntl` — would otherwise hold the end back).
    private func readExactly(_ buffer: inout [UInt8], count: Int) -> Bool {
        var done = 0
        while done < count {
            var ready = pollfd(fd: child.output, events: Int16(POLLIN), revents: 0)
            let polled = SystemCall.retryingOnInterrupt { poll(&ready, 1, 250) }
            if polled < 0 { return false }
            if polled == 0 {
                if child.hasEnded() { return false }
                continue
            }
            let n = buffer.withUnsafeMutableBytes { raw in
                // Safe: `done < count <= raw.count`.
                SystemCall.retryingOnInterrupt { Glibc.read(child.output, raw.baseAddress! + done, count - done) }
            }
            if n <= 0 { return false }
            done += n
        }
        return true
    }

    private func finish(_ outcome: Result<Sink.Output, TransferFailure>) {
        var outcome = outcome
        // After a failure the child may still be sending: end it before waiting for it.
        if case .failure = outcome { child.kill() }
        _ = child.reap()
        // A failure we caused (a limit, a timeout, a cancel) is reported as such.
        let (continuation, failure, cancelled) = state.withLock { state in
            let c = state.continuation
            state.continuation = nil
            state.watchdog?.stop()
            state.watchdog = nil
            return (c, state.failure, state.cancelled)
        }
        if let failure { outcome = .failure(failure) } else if cancelled { outcome = .failure(.cancelled) }
        continuation?.resume(returning: outcome)
    }
}
