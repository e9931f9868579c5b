import Colonnade
import DataLinkFormat
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension DataLinkClient {
    /// Downloads a whole-table export into the file at `path` (created or emptied, mode 0600).
    ///
    /// 1. `GET {base}/api/v3/datatables/{PUB}/{TABLE}.json?qopts.export=true` with the row filters
    ///    (`ticker`, `date.gte`, `date.lte`, `qopts.columns`), repeated (see ``ExportPolling``)
    ///    until its `status` is `fresh`.
    /// 2. `GET` the link, streamed into the file. The link is on another host and grants access
    ///    by itself: the API key is never sent there, and the link is never logged or shown.
    ///    A dropped connection resumes with `Range: bytes=N-`; a refused link (401, 403, 400,
    ///    410: expired) makes the client ask for a fresh one.
    /// 3. The file must start like a zip (an HTML page or an XML error is refused).
    ///
    /// - Throws: ``DataLinkError``: the status request's errors, ``DataLinkError/exportNotReady(_:status:waited:requests:)``,
    ///   ``DataLinkError/exportDownloadFailed(_:host:status:reason:)``, ``DataLinkError/cancelled(_:)``.
    ///   The file is left as it is (the caller removes it).
    public func downloadTableExport(
        _ table: String,
        tickers: [String] = [],
        from: Day? = nil,
        to: Day? = nil,
        columns: [String]? = nil,
        to path: String,
        polling: ExportPolling = ExportPolling(),
        events: @Sendable (ExportEvent) -> Void = { _ in }
    ) async throws(DataLinkError) -> ExportDownload {
        let request = try tableRequest(
            table, codes: tickers.map { DataLinkSymbols.code(fromSymbol: $0) }, from: from, to: to,
            columns: columns, perPage: nil, cursorID: nil, export: true)
        let fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw .exportDownloadFailed(
                request.target, host: "-", status: nil,
                reason: "cannot create \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }

        var statusRequests = 0
        var status = try await waitForFreshExport(request, polling: polling, requests: &statusRequests, events: events)
        var links = 1, refusals = 0, stalled = 0, resumes = 0
        while true {
            // Safe: waitForFreshExport returns only fresh statuses, which have a link.
            guard let link = status.link else {
                throw .exportNotReady(request.target, status: status.status, waited: .zero, requests: statusRequests)
            }
            let host = Self.hostLabel(link)
            let redactor = self.redactor.hiding(link)
            if Task.isCancelled { throw .cancelled(request.target) }
            let offset = Self.fileSize(fd)
            if offset > 0 { resumes += 1 }
            events(.downloading(host: host, offset: offset))
            log("DataLink: downloading the export of \(request.target) from \(host)\(offset > 0 ? ", resuming at byte \(offset)" : "")")
            let outcome = await configuration.transport.download(
                .download(link, headers: ["User-Agent": Self.userAgent, "Accept": "application/zip, */*"], offset: offset),
                fd, offset, configuration.requestTimeout)
            let result: DownloadResult
            switch outcome {
            case .failure(.cancelled):
                throw .cancelled(request.target)
            case .failure(.malformed(let reason)):
                throw .exportDownloadFailed(
                    request.target, host: host, status: nil, reason: "malformed response: \(redactor.oneLine(reason, limit: 200))")
            case .failure(.tooLarge), .failure(.deadline):
                // Not produced by a download (no size limit, no whole-request deadline: the file streams to disk).
                throw .exportDownloadFailed(request.target, host: host, status: nil, reason: "stopped")
            case .failure(.urlError(let code, let reason)):
                if code == NSURLErrorCannotWriteToFile {
                    throw .exportDownloadFailed(request.target, host: host, status: nil, reason: redactor.oneLine(reason))
                }
                stalled = Self.fileSize(fd) > offset ? 0 : stalled + 1
                guard stalled < polling.maximumStalledAttempts else {
                    throw .exportDownloadFailed(
                        request.target, host: host, status: nil,
                        reason: "connection failed \(stalled) times in a row: \(redactor.oneLine(reason, limit: 200))")
                }
                log("DataLink: the export download from \(host) failed (\(redactor.oneLine(reason, limit: 200))); resuming")
                try await pause(stalled, target: request.target)
                continue
            case .success(let r):
                result = r
            }
            switch result.status {
            case 200, 206:
                if result.complete {
                    try Self.checkZip(fd, result: result, target: request.target, host: host, redactor: redactor)
                    return ExportDownload(
                        bytes: Self.fileSize(fd), statusRequests: statusRequests, links: links,
                        resumes: resumes, dataSnapshotTime: status.dataSnapshotTime)
                }
                stalled = result.fileSize > offset ? 0 : stalled + 1
                guard stalled < polling.maximumStalledAttempts else {
                    throw .exportDownloadFailed(
                        request.target, host: host, status: result.status,
                        reason: "the body was cut off \(stalled) times in a row without progress")
                }
                log("DataLink: the export download from \(host) stopped at byte \(result.fileSize); resuming")
            case 416:
                // The range is past the end: the file changed; start over.
                _ = ftruncate(fd, 0)
                stalled += 1
                guard stalled < polling.maximumStalledAttempts else {
                    throw .exportDownloadFailed(request.target, host: host, status: 416, reason: "the server refused every byte range")
                }
            case 400, 401, 403, 404, 410:
                refusals += 1
                let body = redactor.bodyPrefix(result.errorBody, limit: 160)
                guard refusals <= polling.maximumLinkRefusals else {
                    throw .exportDownloadFailed(
                        request.target, host: host, status: result.status,
                        reason: "the link was refused \(refusals) times, each time with a fresh link (\(body))")
                }
                events(.linkRefused(status: result.status))
                log("DataLink: the export link was refused (HTTP \(result.status)); asking for a fresh link")
                _ = ftruncate(fd, 0)
                status = try await waitForFreshExport(request, polling: polling, requests: &statusRequests, events: events)
                links += 1
            case 429, 500 ..< 600:
                stalled += 1
                guard stalled < polling.maximumStalledAttempts else {
                    throw .exportDownloadFailed(
                        request.target, host: host, status: result.status,
                        reason: redactor.bodyPrefix(result.errorBody, limit: 160))
                }
                try await pause(stalled, target: request.target)
            default:
                throw .exportDownloadFailed(
                    request.target, host: host, status: result.status,
                    reason: "unexpected answer: \(redactor.bodyPrefix(result.errorBody, limit: 160))")
            }
        }
    }

    /// Asks for the export until it is fresh, waiting between requests.
    func waitForFreshExport(
        _ request: PreparedRequest, polling: ExportPolling, requests: inout Int,
        events: @Sendable (ExportEvent) -> Void
    ) async throws(DataLinkError) -> ExportStatus {
        let clock = ContinuousClock()
        let start = clock.now
        var interval = polling.firstInterval
        while true {
            if Task.isCancelled { throw .cancelled(request.target) }
            let response = try await perform(request)
            requests += 1
            guard let status = ExportStatus.parse(response.body) else {
                throw .unexpectedResponse(
                    request.target, status: response.status, contentType: response.contentType,
                    bodyPrefix: "not an export status: \(redactor.hidingURLs(in: response.body).bodyPrefix(response.body))")
            }
            if status.isFresh { return status }
            // Fresh, but with no link we may download (missing, or not an absolute http(s) URL:
            // `file://`, `ftp://`, a relative path): asking again would only wait out the timeout.
            if status.status == "fresh" {
                throw .unexpectedResponse(
                    request.target, status: response.status, contentType: response.contentType,
                    bodyPrefix: "the export is fresh, but its file.link is missing or not an absolute http(s) URL")
            }
            let elapsed = clock.now - start
            let left = polling.timeout - elapsed
            if left <= .zero {
                throw .exportNotReady(
                    request.target, status: redactor.oneLine(status.status, limit: 40), waited: elapsed, requests: requests)
            }
            var wait = RetryAfter.parse(response.header("retry-after")) ?? interval
            if wait > left { wait = left }
            events(.waiting(status: redactor.oneLine(status.status, limit: 40), elapsed: elapsed, next: wait))
            log("DataLink: the export of \(request.target) is '\(status.status)'; asking again in \(DataLinkError.format(wait))")
            do {
                try await configuration.sleep(wait)
            } catch {
                throw .cancelled(request.target)
            }
            interval = polling.next(after: interval)
        }
    }

    /// A short growing pause before another download attempt.
    private func pause(_ attempt: Int, target: DataLinkTarget) async throws(DataLinkError) {
        do {
            try await configuration.sleep(.milliseconds(100 << Swift.min(attempt, 6)))
        } catch {
            throw .cancelled(target)
        }
    }

    /// Refuses a download that is not a zip (an HTML page, an XML error document).
    private static func checkZip(
        _ fd: Int32, result: DownloadResult, target: DataLinkTarget, host: String, redactor: Redactor
    ) throws(DataLinkError) {
        var head = [UInt8](repeating: 0, count: 256)
        let n = head.withUnsafeMutableBytes { SystemCall.readFully(fd, $0.baseAddress!, $0.count, at: 0) }
        let bytes = Array(head.prefix(Swift.max(n, 0)))
        let isZip =
            bytes.count >= 4 && bytes[0] == 0x50 && bytes[1] == 0x4B
            && ((bytes[2] == 3 && bytes[3] == 4) || (bytes[2] == 5 && bytes[3] == 6))
        if isZip { return }
        let type = result.headers["content-type"].map { redactor.oneLine($0, limit: 80) } ?? "none"
        throw .exportDownloadFailed(
            target, host: host, status: result.status,
            reason: "not a zip file (content type \(type)): \(redactor.bodyPrefix(Data(bytes), limit: 160))")
    }

    /// `host` or `host:port`: what errors and logs may show of a link.
    static func hostLabel(_ url: URL) -> String {
        let host = url.host ?? "?"
        return url.port.map { "\(host):\($0)" } ?? host
    }

    static func fileSize(_ fd: Int32) -> Int {
        var info = stat()
        return fstat(fd, &info) == 0 ? Int(info.st_size) : 0
    }
}
