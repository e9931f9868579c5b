import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The raw outcome of one HTTP exchange, before it is judged.
struct TransferResult: Sendable {
    var status: Int
    var headers: [String: String]
    var body: Data
    var url: URL?
}

/// Why one HTTP exchange produced no response.
enum TransferFailure: Error, Sendable {
    case urlError(code: Int, reason: String)
    case tooLarge(declaredLength: Int?)
    case cancelled
}

/// One GET through `URLSession`'s delegate API, with a body-size limit, an idle timeout and
/// prompt cancellation.
///
/// Sizes: `Content-Length` is checked before the body is read; then the bytes delivered are
/// counted. libcurl advertises `Accept-Encoding: deflate, gzip, br, zstd` and decompresses, so
/// `Content-Length` is the compressed size while the count is of decompressed bytes — the
/// count is what bounds memory (a compression bomb stops at the limit too).
///
/// The timeout is our own watchdog, not `timeoutIntervalForRequest`: swift-corelibs-foundation
/// truncates that interval to whole seconds (1.5 s acts as 1 s, and anything below 1 s times
/// out at once). URLSession's own timeout is set far out, as a backstop only.
///
/// Why the delegate API and a session per exchange: it is the only URLSession interface that
/// works on Linux (swift-corelibs-foundation) and sees the body *while* it streams, so an
/// oversized body is cancelled at the limit instead of being buffered whole; and a dedicated
/// session can be invalidated at the end, which breaks the session → delegate retain cycle.
enum HTTPTransfer {
    static func get(_ request: URLRequest, timeout: Duration, limit: Int, keyHeader: String?) async -> Result<TransferResult, TransferFailure> {
        let backstop = 86_400.0
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = backstop
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        var request = request
        request.timeoutInterval = backstop

        let delegate = TransferDelegate(limit: limit, timeout: timeout, origin: request.url, keyHeader: keyHeader)
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

/// Collects one task's response and body; all state behind a mutex (callbacks arrive on the
/// session's queue, cancellation on any thread).
final class TransferDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private struct State {
        var task: URLSessionDataTask?
        var continuation: CheckedContinuation<Result<TransferResult, TransferFailure>, Never>?
        var cancelled = false
        var failure: TransferFailure?
        var response: HTTPURLResponse?
        var body = Data()
        var declaredLength: Int?
        var lastActivity = ContinuousClock.now
    }

    private let limit: Int
    private let timeout: Duration
    private let origin: URL?
    private let keyHeader: String?
    private let state = Mutex(State())

    init(limit: Int, timeout: Duration, origin: URL?, keyHeader: String?) {
        self.limit = limit
        self.timeout = timeout
        self.origin = origin
        self.keyHeader = keyHeader
    }

    func start(_ task: URLSessionDataTask, continuation: CheckedContinuation<Result<TransferResult, TransferFailure>, Never>) {
        let alreadyCancelled = state.withLock { state in
            if state.cancelled { return true }
            state.task = task
            state.continuation = continuation
            state.lastActivity = .now
            return false
        }
        if alreadyCancelled {
            continuation.resume(returning: .failure(.cancelled))
        } else {
            task.resume()
        }
    }

    /// Fails the transfer with a timeout once nothing has arrived for `timeout`; returns when
    /// it fired or when its task is cancelled (the transfer ended).
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
            try? await Task.sleep(until: deadline, clock: .continuous)
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
        let declared = response.expectedContentLength >= 0 ? Int(response.expectedContentLength) : nil
        let tooLarge = state.withLock { state in
            state.response = response as? HTTPURLResponse
            state.declaredLength = declared
            state.lastActivity = .now
            if let declared, declared > limit {
                state.failure = .tooLarge(declaredLength: declared)
                return true
            }
            if let declared { state.body.reserveCapacity(declared) }
            return false
        }
        if tooLarge {
            completionHandler(.cancel)
            dataTask.cancel()
        } else {
            completionHandler(.allow)
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let overLimit = state.withLock { state in
            if state.failure != nil { return false }
            state.lastActivity = .now
            if state.body.count + data.count > limit {
                state.failure = .tooLarge(declaredLength: state.declaredLength)
                state.body = Data()
                return true
            }
            state.body.append(data)
            return false
        }
        if overLimit { dataTask.cancel() }
    }

    /// Follows redirects, but drops the key header when the redirect leaves the original
    /// scheme, host or port (e.g. a pre-signed download link on another host).
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        var request = request
        if let keyHeader, let url = request.url,
           url.scheme != origin?.scheme || url.host != origin?.host || url.port != origin?.port {
            request.setValue(nil, forHTTPHeaderField: keyHeader)
        }
        completionHandler(request)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let (continuation, result) = state.withLock { state -> (CheckedContinuation<Result<TransferResult, TransferFailure>, Never>?, Result<TransferResult, TransferFailure>) in
            let continuation = state.continuation
            state.continuation = nil
            state.task = nil
            if let failure = state.failure { return (continuation, .failure(failure)) }
            if state.cancelled { return (continuation, .failure(.cancelled)) }
            if let error {
                let nsError = error as NSError
                if nsError.domain == NSURLErrorDomain, nsError.code == NSURLErrorCancelled {
                    return (continuation, .failure(.cancelled))
                }
                return (continuation, .failure(.urlError(code: nsError.code, reason: nsError.localizedDescription)))
            }
            guard let response = state.response else {
                return (continuation, .failure(.urlError(code: NSURLErrorBadServerResponse, reason: "no HTTP response")))
            }
            var headers: [String: String] = [:]
            for (name, value) in response.allHeaderFields {
                headers[String(describing: name).lowercased()] = String(describing: value)
            }
            // Belt and braces: a body shorter than its declared length is a cut connection,
            // whether or not the transport reported it (compressed bodies are not comparable).
            if let declared = state.declaredLength, headers["content-encoding"] == nil, state.body.count < declared {
                return (continuation, .failure(.urlError(
                    code: NSURLErrorNetworkConnectionLost,
                    reason: "body cut off after \(state.body.count) of \(declared) bytes")))
            }
            let body = state.body
            state.body = Data()
            return (continuation, .success(TransferResult(status: response.statusCode, headers: headers, body: body, url: response.url)))
        }
        continuation?.resume(returning: result)
    }
}
