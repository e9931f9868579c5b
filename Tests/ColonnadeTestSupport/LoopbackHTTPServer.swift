import Dispatch
import Foundation
import Glibc
import Synchronization

/// A small, real HTTP/1.1 server on 127.0.0.1 for tests: scripted answers, recorded requests.
///
/// Every connection gets its own thread; each answer ends with `Connection: close`, so one
/// connection carries one request. The handler decides per request what happens
/// (see ``LoopbackHTTPAction``): a normal response, a delayed one, a body cut off mid-way, a
/// TCP reset, an oversized body, or no answer at all.
///
/// ```swift
/// try await LoopbackHTTPServer.run({ request in .json(#"{"ok":true}"#) }) { server in
///     // talk to server.baseURL …
///     #expect(server.requests.count == 1)
/// }
/// ```
///
/// Bounded by construction: it binds only to 127.0.0.1 on an ephemeral port, stops when
/// `run`'s body returns (or on `stop()`, or `deinit`), and stops itself after `maxLifetime`
/// seconds in any case, so a forgotten server cannot outlive a test run.
public final class LoopbackHTTPServer: Sendable {
    public typealias Handler = @Sendable (LoopbackHTTPRequest) -> LoopbackHTTPAction

    /// The port the kernel chose.
    public let port: UInt16
    /// `http://127.0.0.1:<port>`
    public let baseURL: URL

    private let listener: Int32
    private let handler: Handler
    private let threads = DispatchGroup()
    private let state = Mutex(State())

    private struct State {
        var stopped = false
        var nextSequenceNumber = 0
        var requests: [LoopbackHTTPRequest] = []
        var inFlight = 0
        var maxInFlight = 0
        var connections: Set<Int32> = []
        /// Whether the accept loop has closed the listener (its number may then be reused).
        var listenerClosed = false
        var bodyBytesSent: [Int: Int] = [:]
    }

    /// Binds 127.0.0.1:0, starts accepting, and returns.
    /// - Parameter maxLifetime: seconds after which the server stops by itself; nil (the default):
    ///   only `stop()` stops it (``run(maxLifetime:_:body:)`` always calls it). A wall-clock
    ///   lifetime made tests fail with "connection refused" when a loaded machine (a sanitizer
    ///   build, other engineers' builds) delayed their first request past it.
    public init(maxLifetime: Double? = nil, handler: @escaping Handler) throws {
        self.handler = handler
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw LoopbackHTTPServerError.socket(errno) }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 64) == 0 else {
            let code = errno
            close(fd)
            throw LoopbackHTTPServerError.bind(code)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else {
            let code = errno
            close(fd)
            throw LoopbackHTTPServerError.bind(code)
        }
        listener = fd
        port = UInt16(bigEndian: address.sin_port)
        baseURL = URL(string: "http://127.0.0.1:\(port)")!

        threads.enter()
        let acceptThread = Thread { [self] in
            acceptLoop()
            threads.leave()
        }
        acceptThread.name = "LoopbackHTTPServer.accept"
        acceptThread.start()

        if let maxLifetime {
            DispatchQueue.global().asyncAfter(deadline: .now() + maxLifetime) { [weak self] in
                self?.stop()
            }
        }
    }

    deinit { stop() }

    /// Starts a server, runs `body`, and stops the server however `body` ends.
    public static func run<R>(
        maxLifetime: Double? = nil,
        _ handler: @escaping Handler,
        body: (LoopbackHTTPServer) async throws -> R
    ) async throws -> R {
        let server = try LoopbackHTTPServer(maxLifetime: maxLifetime, handler: handler)
        defer { server.stop() }
        return try await body(server)
    }

    // MARK: What the server saw

    /// Every request received so far, in arrival order (thread-safe snapshot).
    public var requests: [LoopbackHTTPRequest] { state.withLock { $0.requests } }

    /// The largest number of requests that were being answered at the same moment.
    public var maxConcurrentRequests: Int { state.withLock { $0.maxInFlight } }

    /// Body bytes actually written for the request with this sequence number.
    public func bodyBytesSent(forRequest sequenceNumber: Int) -> Int {
        state.withLock { $0.bodyBytesSent[sequenceNumber] ?? 0 }
    }

    /// Waits (polling, without blocking a thread) until at least `count` requests have arrived;
    /// false on timeout. Returns as soon as they are there: the generous default timeout only
    /// bounds how long a broken client can hold a test up, it is not a performance claim.
    public func waitForRequests(_ count: Int, timeout: Duration = .seconds(60)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if state.withLock({ $0.requests.count >= count }) { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return state.withLock { $0.requests.count >= count }
    }

    /// Waits (polling, without blocking a thread) until no connection is open, e.g. until the
    /// server noticed that a client hung up mid-body; false on timeout (generous by default,
    /// see ``waitForRequests(_:timeout:)``).
    public func waitUntilIdle(timeout: Duration = .seconds(60)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if state.withLock({ $0.connections.isEmpty && $0.inFlight == 0 }) { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return false
    }

    /// Whether no connection is open and no request is being answered now (see
    /// ``waitUntilIdle(timeout:)``), for tests that poll from a thread of their own.
    public var isIdle: Bool { state.withLock { $0.connections.isEmpty && $0.inFlight == 0 } }

    /// True once `stop()` ran.
    public var isStopped: Bool { state.withLock { $0.stopped } }

    // MARK: Stopping

    /// Closes the listener and every open connection, and waits (up to 5 s) for all threads.
    /// Safe to call more than once and from any thread.
    public func stop() {
        let connections: Set<Int32>? = state.withLock { state in
            if state.stopped { return nil }
            state.stopped = true
            // shutdown wakes threads blocked in accept/recv/send; each thread closes its own fd.
            // Under the lock: a descriptor is closed only under it too, after it leaves the set,
            // so no number this process reused meanwhile (another test's socket) is shut down.
            if !state.listenerClosed { shutdown(listener, Int32(SHUT_RDWR)) }
            for fd in state.connections { shutdown(fd, Int32(SHUT_RDWR)) }
            return state.connections
        }
        guard connections != nil else { return }
        _ = threads.wait(timeout: .now() + 5)
    }

    /// Whether every thread of the server has ended (after `stop()`: it did not have to wait
    /// out its 5-second grace for any of them).
    public var allThreadsEnded: Bool { threads.wait(timeout: .now()) == .success }

    // MARK: Internals

    private func acceptLoop() {
        while !isStopped {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                break
            }
            let accepted: Bool = state.withLock { state in
                if state.stopped { return false }
                state.connections.insert(client)
                return true
            }
            guard accepted else {
                close(client)
                break
            }
            threads.enter()
            let thread = Thread { [self] in
                serve(client)
                state.withLock {
                    _ = $0.connections.remove(client)
                    close(client)
                }
                threads.leave()
            }
            thread.name = "LoopbackHTTPServer.connection"
            thread.start()
        }
        state.withLock {
            $0.listenerClosed = true
            close(listener)
        }
    }

    private func serve(_ fd: Int32) {
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard let head = readHead(fd) else { return }
        let sequenceNumber = state.withLock { state in
            defer { state.nextSequenceNumber += 1 }
            return state.nextSequenceNumber
        }
        guard let request = LoopbackHTTPRequest.parse(head: head, sequenceNumber: sequenceNumber) else {
            _ = write(fd, Array("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8))
            return
        }
        state.withLock { state in
            state.requests.append(request)
            state.inFlight += 1
            state.maxInFlight = max(state.maxInFlight, state.inFlight)
        }
        defer { state.withLock { $0.inFlight -= 1 } }
        perform(handler(request), on: fd, sequenceNumber: sequenceNumber)
    }

    private func perform(_ action: LoopbackHTTPAction, on fd: Int32, sequenceNumber: Int) {
        switch action {
        case let .respond(status, headers, body):
            respond(fd, status: status, headers: headers, body: body, sentBytes: body.count, sequenceNumber: sequenceNumber)
        case let .respondAfter(seconds, status, headers, body):
            guard waitUnlessStopped(seconds: seconds) else { return }
            respond(fd, status: status, headers: headers, body: body, sentBytes: body.count, sequenceNumber: sequenceNumber)
        case let .cutOff(status, headers, body, sentBytes):
            respond(fd, status: status, headers: headers, body: body, sentBytes: min(sentBytes, body.count), sequenceNumber: sequenceNumber)
        case let .drip(status, headers, body, pieces, interval):
            guard write(fd, headerBlock(status: status, headers: headers, framing: "Content-Length: \(body.count)")) else { return }
            let pieceSize = max(1, (body.count + max(pieces, 1) - 1) / max(pieces, 1))
            var sent = 0
            while sent < body.count {
                if sent > 0 { guard waitUnlessStopped(seconds: interval) else { return } }
                let end = min(body.count, sent + pieceSize)
                guard write(fd, Array(body[body.startIndex + sent ..< body.startIndex + end])) else { return }
                sent = end
                state.withLock { $0.bodyBytesSent[sequenceNumber] = sent }
            }
        case .reset:
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        case let .oversized(status, headers, byteCount, declaresLength):
            streamFiller(
                fd, status: status, headers: headers, byteCount: byteCount, declaresLength: declaresLength, sequenceNumber: sequenceNumber)
        case let .respondAfterRequests(count, delay, status, headers, body):
            guard waitUnlessStopped(seconds: .infinity, until: { self.state.withLock { $0.requests.count >= count } }),
                waitUnlessStopped(seconds: delay)
            else { return }
            respond(fd, status: status, headers: headers, body: body, sentBytes: body.count, sequenceNumber: sequenceNumber)
        case .hang:
            _ = waitUnlessStopped(seconds: .infinity, until: { Self.peerHungUp(fd) })
        case let .verbatim(head, body):
            guard write(fd, Array((head + "\r\n").utf8)) else { return }
            if write(fd, Array(body)) { state.withLock { $0.bodyBytesSent[sequenceNumber] = body.count } }
        case let .flood(status, headers, byteCount):
            guard write(fd, headerBlock(status: status, headers: headers, framing: "Transfer-Encoding: chunked")) else { return }
            let piece = 1 << 20
            let chunk =
                Array((String(piece, radix: 16) + "\r\n").utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: piece) + Array("\r\n".utf8)
            var sent = 0
            while sent < byteCount, !isStopped {
                guard write(fd, chunk) else { return }
                sent += piece
                state.withLock { $0.bodyBytesSent[sequenceNumber] = sent }
            }
            _ = write(fd, Array("0\r\n\r\n".utf8))
        }
    }

    /// True when the peer closed or reset the connection (a non-blocking peek sees EOF or an error).
    private static func peerHungUp(_ fd: Int32) -> Bool {
        var byte: UInt8 = 0
        let count = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        if count == 0 { return true }
        if count < 0 { return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR }
        return false
    }

    /// Sleeps in small steps until `seconds` passed or `condition` holds; false when the server
    /// stopped first.
    private func waitUnlessStopped(seconds: Double, until condition: () -> Bool = { false }) -> Bool {
        let deadline = Date().addingTimeInterval(min(seconds, 3600))
        while Date() < deadline {
            if isStopped { return false }
            if condition() { return true }
            usleep(5_000)
        }
        return !isStopped
    }

    private func headerBlock(status: Int, headers: [String: String], framing: String) -> [UInt8] {
        var text = "HTTP/1.1 \(status) \(loopbackReasonPhrase(status))\r\n"
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { text += "\(name): \(value)\r\n" }
        text += "\(framing)\r\nConnection: close\r\n\r\n"
        return Array(text.utf8)
    }

    private func respond(_ fd: Int32, status: Int, headers: [String: String], body: Data, sentBytes: Int, sequenceNumber: Int) {
        guard write(fd, headerBlock(status: status, headers: headers, framing: "Content-Length: \(body.count)")) else { return }
        if write(fd, Array(body.prefix(sentBytes))) {
            state.withLock { $0.bodyBytesSent[sequenceNumber] = sentBytes }
        }
    }

    private func streamFiller(
        _ fd: Int32, status: Int, headers: [String: String], byteCount: Int, declaresLength: Bool, sequenceNumber: Int
    ) {
        let framing = declaresLength ? "Content-Length: \(byteCount)" : "Transfer-Encoding: chunked"
        guard write(fd, headerBlock(status: status, headers: headers, framing: framing)) else { return }
        let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 64 * 1024)
        var sent = 0
        while sent < byteCount, !isStopped {
            let count = min(chunk.count, byteCount - sent)
            var bytes: [UInt8] = []
            if !declaresLength { bytes += Array((String(count, radix: 16) + "\r\n").utf8) }
            bytes += chunk[0 ..< count]
            if !declaresLength { bytes += Array("\r\n".utf8) }
            guard write(fd, bytes) else { break }
            sent += count
            state.withLock { $0.bodyBytesSent[sequenceNumber] = sent }
            usleep(500)  // ≤ 128 MB/s: fast, but slow enough that a client's cancel can win the race
        }
        if sent == byteCount, !declaresLength { _ = write(fd, Array("0\r\n\r\n".utf8)) }
    }

    /// Writes everything (no SIGPIPE); false when the peer went away.
    private func write(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += written
        }
        return true
    }

    /// Reads up to the blank line that ends the header block (at most 64 KiB).
    private func readHead(_ fd: Int32) -> String? {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        let terminator: [UInt8] = Array("\r\n\r\n".utf8)
        while buffer.count < 64 * 1024 {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return nil }
            buffer += chunk[0 ..< count]
            if let end = buffer.firstRange(of: terminator) {
                return String(decoding: buffer[..<end.lowerBound], as: UTF8.self)
            }
        }
        return nil
    }
}

/// A loopback port that refuses connections: bound (so no other server can take it) but never
/// listening, so a connect gets an immediate RST. Closed on `deinit`.
public final class LoopbackClosedPort: Sendable {
    public let port: UInt16
    /// `http://127.0.0.1:<port>`
    public let baseURL: URL
    private let fd: Int32

    public init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw LoopbackHTTPServerError.socket(errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard ok else {
            let code = errno
            close(fd)
            throw LoopbackHTTPServerError.bind(code)
        }
        self.fd = fd
        port = UInt16(bigEndian: address.sin_port)
        baseURL = URL(string: "http://127.0.0.1:\(port)")!
    }

    deinit { close(fd) }
}

/// Why a loopback server could not start.
public enum LoopbackHTTPServerError: Error, CustomStringConvertible {
    case socket(Int32)
    case bind(Int32)

    public var description: String {
        switch self {
        case .socket(let code): "loopback server: socket() failed: \(String(cString: strerror(code)))"
        case .bind(let code): "loopback server: bind/listen on 127.0.0.1:0 failed: \(String(cString: strerror(code)))"
        }
    }
}
