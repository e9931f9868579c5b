import Colonnade
import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How one download attempt ended.
struct DownloadResult: Sendable {
    /// The HTTP status.
    var status: Int
    /// Response headers, names lower-cased.
    var headers: [String: String]
    /// The file's size after the attempt (what is on disk, from offset 0).
    var fileSize: Int
    /// The start of a refused answer's body (at most 64 KiB), for the error message.
    var errorBody: Data
    /// Whether the body arrived whole (its declared length, when there was one).
    var complete: Bool
}

/// One GET streamed into a file, from `offset` on (a `Range` request when it is not 0), with
/// an idle timeout and prompt cancellation. No body is held in memory: each piece is written
/// with `pwrite` as it arrives.
///
/// A `206` with a `Content-Range` starting at `offset` appends; a `200` (the server ignored the
/// range) starts the file over; any other status is not written to the file (its first bytes are
/// kept for the error). A connection that drops mid-body is not an error here: the result says
/// how far the file got, and the caller resumes. A `Content-Length` that is unparsable,
/// overflowing or contradictory is a malformed response (see ``ContentLength``).
///
/// With `process`, the download runs in a child process (``TransferProcess``), which streams
/// the body to this process to write: a header that traps FoundationNetworking ends the child,
/// not the caller.
enum HTTPDownload {
    static func get(
        _ url: URL, headers: [String: String], into fd: Int32, offset: Int,
        timeout: Duration, process: TransferProcess? = nil
    ) async -> Result<DownloadResult, TransferFailure> {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 86_400
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        var request = URLRequest(url: url)
        request.httpMethod = "GET"
        request.timeoutInterval = 86_400
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        // Bytes as stored: a transparently decompressed body would not match a byte range.
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        if offset > 0 { request.setValue("bytes=\(offset)-", forHTTPHeaderField: "Range") }
        if let process { return await process.download(request, into: fd, offset: offset, timeout: timeout) }

        let delegate = DownloadDelegate(fd: fd, offset: offset, timeout: timeout)
        let session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: request)
        let watchdog = Task { await delegate.watch() }
        defer { watchdog.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                delegate.start(task, continuation: continuation)
            }
        } onCancel: {
            delegate.cancel()
        }
    }
}

/// The state of one download into a file: where the next byte goes, what was declared, the
/// start of a refused answer's body. Shared by the in-process delegate (under its mutex) and
/// the transfer process's sink (on its reader thread).
struct DownloadWriter {
    let fd: Int32
    let offset: Int
    private(set) var headers: [String: String] = [:]
    private(set) var status: Int?
    /// Where the next byte goes; nil when the body is not written (an error status).
    private var position: Int?
    private var expectedEnd: Int?
    private var errorBody = Data()
    private var writeError: String?

    init(fd: Int32, offset: Int) {
        self.fd = fd
        self.offset = offset
    }

    /// Why writing stopped, once ``write(_:)`` returned false.
    var failure: TransferFailure? {
        writeError.map { .urlError(code: NSURLErrorCannotWriteToFile, reason: "cannot write the download: \($0)") }
    }

    /// The response head (header names lower-cased); a malformed `Content-Length` refuses it.
    mutating func begin(status: Int, headers: [String: String]) -> TransferFailure? {
        self.status = status
        self.headers = headers
        // The header as sent, read strictly: Foundation's `expectedContentLength` shows a value
        // past 2^63 - 1 as unknown, and a download taken as complete without its length would
        // be a truncated zip.
        let length: Int?
        switch ContentLength.parse(headers["content-length"]) {
        case .success(let declared): length = declared
        case .failure(let problem): return .malformed(problem.reason)
        }
        switch status {
        case 206 where offset > 0 && Self.rangeStart(headers["content-range"]) == offset:
            position = offset
            expectedEnd = length.map { offset + $0 }
        case 200:
            // The whole body again (a server that ignores ranges): start the file over.
            if ftruncate(fd, 0) != 0 { writeError = String(cString: strerror(errno)) }
            position = 0
            expectedEnd = length
        default:
            position = nil
        }
        return nil
    }

    /// The first byte of `bytes a-b/n`.
    static func rangeStart(_ value: String?) -> Int? {
        guard let value, value.hasPrefix("bytes ") else { return nil }
        let range = value.dropFirst(6).split(separator: "/").first ?? ""
        return Int(range.split(separator: "-").first ?? "")
    }

    /// Writes a piece at the current position (or keeps the start of an error body); false
    /// when the file cannot be written (see ``failure``).
    mutating func write(_ data: Data) -> Bool {
        guard writeError == nil else { return false }
        guard let position else {
            if errorBody.count < 64 * 1024 { errorBody.append(data.prefix(64 * 1024 - errorBody.count)) }
            return true
        }
        let fd = self.fd
        let failed = data.withUnsafeBytes { raw -> String? in
            let code = SystemCall.writeAll(fd, raw.baseAddress, raw.count, at: position)
            return code == 0 ? nil : String(cString: strerror(code))
        }
        if let failed {
            writeError = failed
            return false
        }
        self.position = position + data.count
        return true
    }

    /// The outcome once the transfer ended (`error`: the transport's, if any). A dropped
    /// connection after a good start is not a failure: the result says how far the file got.
    func finish(error: (code: Int, reason: String)?) -> Result<DownloadResult, TransferFailure> {
        if let failure { return .failure(failure) }
        if let error {
            if error.code == NSURLErrorCancelled { return .failure(.cancelled) }
            if status == nil || position == nil { return .failure(.urlError(code: error.code, reason: error.reason)) }
        }
        guard let status else { return .failure(.urlError(code: NSURLErrorBadServerResponse, reason: "no HTTP response")) }
        var info = stat()
        let size = fstat(fd, &info) == 0 ? Int(info.st_size) : 0
        let complete = error == nil && (expectedEnd.map { position == $0 } ?? true)
        return .success(DownloadResult(status: status, headers: headers, fileSize: size, errorBody: errorBody, complete: complete))
    }
}

/// Writes one download's body to a file in this process (``DownloadWriter``); all state behind
/// a mutex.
final class DownloadDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private struct State {
        var task: URLSessionDataTask?
        var continuation: CheckedContinuation<Result<DownloadResult, TransferFailure>, Never>?
        var cancelled = false
        var failure: TransferFailure?
        var writer: DownloadWriter
        var lastActivity = ContinuousClock.now
    }

    private let timeout: Duration
    private let state: Mutex<State>

    init(fd: Int32, offset: Int, timeout: Duration) {
        self.timeout = timeout
        state = Mutex(State(writer: DownloadWriter(fd: fd, offset: offset)))
    }

    func start(_ task: URLSessionDataTask, continuation: CheckedContinuation<Result<DownloadResult, TransferFailure>, Never>) {
        let alreadyCancelled = state.withLock { state in
            if state.cancelled { return true }
            state.task = task
            state.continuation = continuation
            state.lastActivity = .now
            return false
        }
        if alreadyCancelled { continuation.resume(returning: .failure(.cancelled)) } else { task.resume() }
    }

    /// Fails the transfer once nothing has arrived for `timeout`.
    func watch() async {
        while !Task.isCancelled {
            let deadline = state.withLock { $0.lastActivity } + timeout
            if ContinuousClock.now >= deadline {
                let task = state.withLock { state -> URLSessionDataTask? in
                    guard state.failure == nil, !state.cancelled else { return nil }
                    state.failure = .urlError(code: NSURLErrorTimedOut, reason: "timed out")
                    return state.task
                }
                task?.cancel()
                return
            }
            // On a Dispatch timer, as the transfer timeouts: on time even when the pool is busy.
            try? await DispatchSleep.sleep(for: deadline - ContinuousClock.now)
        }
    }

    func cancel() {
        let task = state.withLock { state in
            state.cancelled = true
            return state.task
        }
        task?.cancel()
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let http = response as? HTTPURLResponse
        var headers: [String: String] = [:]
        for (name, value) in http?.allHeaderFields ?? [:] {
            headers[String(describing: name).lowercased()] = String(describing: value)
        }
        let refused = state.withLock { state -> Bool in
            state.lastActivity = .now
            guard let failure = state.writer.begin(status: http?.statusCode ?? 0, headers: headers) else { return false }
            state.failure = failure
            return true
        }
        if refused {
            completionHandler(.cancel)
            dataTask.cancel()
        } else {
            completionHandler(.allow)
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let stop = state.withLock { state -> Bool in
            state.lastActivity = .now
            guard state.failure == nil else { return false }
            return !state.writer.write(data)
        }
        if stop { dataTask.cancel() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let (continuation, result) = state.withLock {
            state -> (CheckedContinuation<Result<DownloadResult, TransferFailure>, Never>?, Result<DownloadResult, TransferFailure>) in
            let continuation = state.continuation
            state.continuation = nil
            state.task = nil
            if let failure = state.writer.failure { return (continuation, .failure(failure)) }
            if let failure = state.failure { return (continuation, .failure(failure)) }
            if state.cancelled { return (continuation, .failure(.cancelled)) }
            let nsError = error.map { $0 as NSError }
            let transport = nsError.map { (code: $0.code, reason: $0.localizedDescription) }
            if let nsError, nsError.domain == NSURLErrorDomain, nsError.code == NSURLErrorCancelled {
                return (continuation, .failure(.cancelled))
            }
            return (continuation, state.writer.finish(error: transport))
        }
        continuation?.resume(returning: result)
    }
}
