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
/// how far the file got, and the caller resumes.
enum HTTPDownload {
    static func get(_ url: URL, headers: [String: String], into fd: Int32, offset: Int,
                    timeout: Duration) async -> Result<DownloadResult, TransferFailure> {
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

/// Writes one download's body to a file; all state behind a mutex.
final class DownloadDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private struct State {
        var task: URLSessionDataTask?
        var continuation: CheckedContinuation<Result<DownloadResult, TransferFailure>, Never>?
        var cancelled = false
        var failure: TransferFailure?
        var response: HTTPURLResponse?
        var headers: [String: String] = [:]
        /// Where the next byte goes; nil when the body is not written (an error status).
        var position: Int?
        var expectedEnd: Int?
        var errorBody = Data()
        var lastActivity = ContinuousClock.now
        var writeError: String?
    }

    private let fd: Int32
    private let offset: Int
    private let timeout: Duration
    private let state = Mutex(State())

    init(fd: Int32, offset: Int, timeout: Duration) {
        self.fd = fd
        self.offset = offset
        self.timeout = timeout
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

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        let http = response as? HTTPURLResponse
        var headers: [String: String] = [:]
        for (name, value) in http?.allHeaderFields ?? [:] {
            headers[String(describing: name).lowercased()] = String(describing: value)
        }
        let status = http?.statusCode ?? 0
        // The header as sent, read strictly (see `ContentLength`): Foundation's
        // `expectedContentLength` shows a value past 2^63 - 1 as unknown, and a download taken as
        // complete without its length would be a truncated zip.
        let length: Int?
        switch ContentLength.parse(headers["content-length"]) {
        case .success(let declared):
            length = declared
        case .failure(let problem):
            state.withLock { state in
                state.response = http
                state.headers = headers
                state.failure = .malformed(problem.reason)
            }
            completionHandler(.cancel)
            dataTask.cancel()
            return
        }
        let fd = self.fd
        let offset = self.offset
        state.withLock { state in
            state.response = http
            state.headers = headers
            state.lastActivity = .now
            switch status {
            case 206 where offset > 0 && Self.rangeStart(headers["content-range"]) == offset:
                state.position = offset
                state.expectedEnd = length.map { offset + $0 }
            case 200:
                // The whole body again (a server that ignores ranges): start the file over.
                if ftruncate(fd, 0) != 0 { state.writeError = String(cString: strerror(errno)) }
                state.position = 0
                state.expectedEnd = length
            default:
                state.position = nil
            }
        }
        completionHandler(.allow)
    }

    /// The first byte of `bytes a-b/n`.
    static func rangeStart(_ value: String?) -> Int? {
        guard let value, value.hasPrefix("bytes ") else { return nil }
        let range = value.dropFirst(6).split(separator: "/").first ?? ""
        return Int(range.split(separator: "-").first ?? "")
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let fd = self.fd
        let stop = state.withLock { state -> Bool in
            state.lastActivity = .now
            guard state.failure == nil, state.writeError == nil else { return false }
            guard var position = state.position else {
                if state.errorBody.count < 64 * 1024 { state.errorBody.append(data.prefix(64 * 1024 - state.errorBody.count)) }
                return false
            }
            let failed = data.withUnsafeBytes { raw -> String? in
                var done = 0
                while done < raw.count {
                    // Safe: `done < raw.count`, so the base address exists and the range is inside.
                    let n = pwrite(fd, raw.baseAddress! + done, raw.count - done, off_t(position))
                    if n < 0 {
                        if errno == EINTR { continue }
                        return String(cString: strerror(errno))
                    }
                    done += n
                    position += n
                }
                return nil
            }
            state.position = position
            if let failed {
                state.writeError = failed
                return true
            }
            return false
        }
        if stop { dataTask.cancel() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let fd = self.fd
        let (continuation, result) = state.withLock { state -> (CheckedContinuation<Result<DownloadResult, TransferFailure>, Never>?, Result<DownloadResult, TransferFailure>) in
            let continuation = state.continuation
            state.continuation = nil
            state.task = nil
            if let writeError = state.writeError {
                return (continuation, .failure(.urlError(code: NSURLErrorCannotWriteToFile, reason: "cannot write the download: \(writeError)")))
            }
            if let failure = state.failure { return (continuation, .failure(failure)) }
            if state.cancelled { return (continuation, .failure(.cancelled)) }
            if let error {
                let nsError = error as NSError
                if nsError.domain == NSURLErrorDomain, nsError.code == NSURLErrorCancelled {
                    return (continuation, .failure(.cancelled))
                }
                // A dropped connection after a good start: report how far the file got.
                if state.response == nil || state.position == nil {
                    return (continuation, .failure(.urlError(code: nsError.code, reason: nsError.localizedDescription)))
                }
            }
            guard let response = state.response else {
                return (continuation, .failure(.urlError(code: NSURLErrorBadServerResponse, reason: "no HTTP response")))
            }
            var info = stat()
            let size = fstat(fd, &info) == 0 ? Int(info.st_size) : 0
            let complete = error == nil && (state.expectedEnd.map { state.position == $0 } ?? true)
            return (continuation, .success(DownloadResult(status: response.statusCode, headers: state.headers, fileSize: size,
                                                          errorBody: state.errorBody, complete: complete)))
        }
        continuation?.resume(returning: result)
    }
}
