import Colonnade
import DataLink
import Dispatch
import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The child's side of ``TransferProcess``: reads one request from `input`, runs it with
/// URLSession, and writes the response head, each body piece and the end as frames to `output`.
///
/// The request is a 4-byte big-endian length and a JSON object: `url`, `headers` (sent as given), `keyHeader` (dropped on a
/// redirect to another scheme, host or port), `memoryLimit` (this process's `RLIMIT_DATA`). No
/// checks and no limits on the answer here: the parent judges it, and ends this process when
/// it has seen enough. A write to the pipe blocks while the parent is behind, which holds this
/// delegate — and a trap in FoundationNetworking ends only this process.
public enum TransferProcessServer {
    /// Serves one request; the process's exit status (0 once the end frame is written).
    public static func serve(input: Int32, output: Int32) -> Int32 {
        // The request: a 4-byte big-endian length, then that much JSON.
        func read(_ count: Int) -> [UInt8]? {
            var bytes = [UInt8](repeating: 0, count: count)
            guard count > 0 else { return bytes }
            // Safe: `count == bytes.count > 0`, so the base address exists.
            let got = bytes.withUnsafeMutableBytes { SystemCall.readFully(input, $0.baseAddress!, count) }
            return got == count ? bytes : nil
        }
        guard let length = read(4).map({ Int($0[0]) << 24 | Int($0[1]) << 16 | Int($0[2]) << 8 | Int($0[3]) }),
            length <= 1 << 20, let bytes = read(length)
        else { return 2 }
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
            let text = object["url"] as? String, let url = URL(string: text)
        else { return 2 }
        if let memoryLimit = object["memoryLimit"] as? Int, memoryLimit > 0 {
            var limit = rlimit(rlim_cur: rlim_t(memoryLimit), rlim_max: rlim_t(memoryLimit))
            _ = setrlimit(__rlimit_resource_t(RLIMIT_DATA.rawValue), &limit)
        }
        signal(SIGPIPE, SIG_IGN)
        exitWhenTheReaderIsGone(output)

        let configuration = sessionConfiguration()
        let request = urlRequest(HTTPRequest(url: url, headers: object["headers"] as? [String: String] ?? [:]))

        let done = DispatchSemaphore(value: 0)
        let delegate = ChildDelegate(output: output, origin: url, keyHeader: object["keyHeader"] as? String) { done.signal() }
        let session = URLSession(
            configuration: configuration, delegate: delegate, delegateQueue: DelegateQueue(label: "colonnade.datalink.child"))
        session.dataTask(with: request).resume()
        done.wait()
        session.finishTasksAndInvalidate()
        return 0
    }

    /// Ends this process as soon as nothing reads `output`. The parent holds the only read end
    /// (close-on-exec, ``TransferProcess``); when it exits, is killed or closes it, the pipe's
    /// write end reports an error to `poll`, so a transfer the parent no longer waits for ends at
    /// once — not when a server that never answers, or the request's day-long timeout, lets it.
    /// (A failed write ends the process too, but a transfer waiting on a silent server writes
    /// nothing.)
    static func exitWhenTheReaderIsGone(_ output: Int32) {
        let watcher = Thread {
            var descriptor = pollfd(fd: output, events: 0, revents: 0)
            while true {
                let ready = poll(&descriptor, 1, -1)
                if ready > 0 && descriptor.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 { _exit(3) }
                if ready < 0 && errno != EINTR { return }
            }
        }
        watcher.name = "DataLink.transfer-parent-watch"
        watcher.start()
    }
}

/// Writes a data task's events as frames; a failed write (the parent is gone) ends the process.
final class ChildDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private let output: Int32
    private let origin: URL
    private let keyHeader: String?
    private let onEnd: @Sendable () -> Void
    private let lock = Mutex(())

    init(output: Int32, origin: URL, keyHeader: String?, onEnd: @escaping @Sendable () -> Void) {
        self.output = output
        self.origin = origin
        self.keyHeader = keyHeader
        self.onEnd = onEnd
    }

    private func send(_ kind: TransferProcess.Frame, _ payload: UnsafeRawBufferPointer) {
        lock.withLock { _ in
            let n = payload.count
            let header: [UInt8] = [
                kind.rawValue, UInt8(truncatingIfNeeded: n >> 24), UInt8(truncatingIfNeeded: n >> 16),
                UInt8(truncatingIfNeeded: n >> 8), UInt8(truncatingIfNeeded: n),
            ]
            let ok = header.withUnsafeBytes { writeAll($0) } && writeAll(payload)
            if !ok { _exit(3) }
        }
    }

    private func send(_ kind: TransferProcess.Frame, json: [String: Any]) {
        let data = (try? JSONSerialization.data(withJSONObject: json)) ?? Data("{}".utf8)
        data.withUnsafeBytes { send(kind, $0) }
    }

    private func writeAll(_ raw: UnsafeRawBufferPointer) -> Bool {
        SystemCall.writeAll(output, raw.baseAddress, raw.count) == 0
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let http = response as? HTTPURLResponse
        let headers = headerFields(of: http, lowercasingNames: false)
        var head: [String: Any] = ["status": http?.statusCode ?? 0, "headers": headers]
        if let url = response.url { head["url"] = url.absoluteString }
        send(.head, json: head)
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        var offset = 0
        while offset < data.count {
            let end = min(data.count, offset + TransferProcess.maximumFrame)
            data[data.startIndex + offset ..< data.startIndex + end].withUnsafeBytes { send(.body, $0) }
            offset = end
        }
    }

    /// Follows redirects, dropping the key header when the redirect leaves the original scheme,
    /// host or port (as `TransferDelegate` does in-process).
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(redirected(request, keyHeader: keyHeader, origin: origin))
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if let error {
            let nsError = error as NSError
            send(.end, json: ["code": nsError.code, "reason": nsError.localizedDescription])
        } else {
            send(.end, json: [:])
        }
        onEnd()
    }
}
