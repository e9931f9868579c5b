import DataLinkFormat
import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension DataLinkClient {
    /// Sends `request`, retrying as the policy allows; the first success or the last error.
    func perform(_ request: PreparedRequest) async throws(DataLinkError) -> DataLinkResponse {
        let policy = configuration.retryPolicy
        let clock = ContinuousClock()
        let start = clock.now
        let deadline = start + configuration.requestDeadline
        if configuration.apiKey != nil, let host = Self.insecureHost(request.url) {
            throw .insecureTransport(request.target, host: redactor.oneLine(host, limit: 100))
        }
        var attempt = 0
        while true {
            attempt += 1
            if Task.isCancelled { throw .cancelled(request.target) }
            let error: DataLinkError
            let (outcome, retryAfter) = await attemptOnce(request, attempt: attempt, deadline: deadline)
            switch outcome {
            case .success(let response): return response
            case .failure(let failure): error = failure
            }
            guard error.isRetryable, attempt < policy.maxAttempts else { throw error }
            let delay = policy.delay(afterAttempt: attempt, retryAfter: retryAfter, random: Double.random(in: 0 ..< 1))
            guard clock.now + delay < deadline else {
                log(
                    "DataLink: giving up on \(request.target) after \(attempt) attempts: waiting \(DataLinkError.format(delay)) would pass the \(DataLinkError.format(configuration.requestDeadline)) request deadline"
                )
                throw error
            }
            guard clock.now - start + delay <= policy.totalBudget else {
                log(
                    "DataLink: giving up on \(request.target) after \(attempt) attempts: waiting \(DataLinkError.format(delay)) would exceed the \(DataLinkError.format(policy.totalBudget)) budget"
                )
                throw error
            }
            log("DataLink: attempt \(attempt) for \(request.target) failed (\(error)); retrying in \(DataLinkError.format(delay))")
            do {
                try await configuration.sleep(delay)
            } catch {
                throw .cancelled(request.target)
            }
        }
    }

    /// The host of `url` when sending the key there would be clear text: plain `http` to a host
    /// that is not a loopback address (`localhost`, `127.0.0.0/8`, `::1`, `::ffff:127.…`);
    /// nil when it is safe (`https`, or loopback).
    static func insecureHost(_ url: URL) -> String? {
        guard url.scheme?.lowercased() != "https" else { return nil }
        let host = url.host ?? ""
        return isLoopback(host) ? nil : (host.isEmpty ? "(no host)" : host)
    }

    /// Whether `host` (a name or a literal address, IPv6 with or without brackets) is loopback.
    static func isLoopback(_ host: String) -> Bool {
        var name = host.lowercased()
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if name == "localhost" || name == "localhost." { return true }
        var v4 = in_addr()
        if inet_pton(AF_INET, name, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, name, &v6) == 1 else { return false }
        let bytes = withUnsafeBytes(of: &v6) { Array($0) }
        if bytes == [UInt8](repeating: 0, count: 15) + [1] { return true }  // ::1
        return bytes[0 ..< 10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF && bytes[12] == 127  // ::ffff:127.x.x.x
    }

    /// One exchange: the judged outcome, and the server's `Retry-After` (honoured for any
    /// retryable answer, 503 included, not only 429 and 202).
    private func attemptOnce(
        _ prepared: PreparedRequest, attempt: Int,
        deadline: ContinuousClock.Instant
    ) async -> (Result<DataLinkResponse, DataLinkError>, Duration?) {
        let target = prepared.target
        var request = HTTPRequest(url: prepared.url, headers: ["Accept": prepared.format.acceptHeader, "User-Agent": Self.userAgent])
        if let key = configuration.apiKey { request.headers[Self.keyHeader] = key.value }
        logRequest(prepared, attempt: attempt)

        let outcome = await configuration.transport.get(
            request, configuration.requestTimeout, deadline, configuration.maximumResponseSize,
            configuration.apiKey == nil ? nil : Self.keyHeader)
        switch outcome {
        case .failure(let failure):
            let error: DataLinkError
            switch failure {
            case .cancelled:
                error = .cancelled(target)
            case .deadline:
                error = .deadlineExceeded(target, after: configuration.requestDeadline)
            case .tooLarge(let declared, let received):
                error = .responseTooLarge(target, limit: configuration.maximumResponseSize, declaredLength: declared, received: received)
            case .malformed(let reason):
                error = .malformedResponse(target, reason: redactor.oneLine(reason, limit: 300))
            case .urlError(let code, let reason):
                error =
                    code == NSURLErrorTimedOut
                    ? .timedOut(target, after: configuration.requestTimeout)
                    : .transport(target, reason: redactor.oneLine("\(reason) (URLError \(code))", limit: 300))
            }
            log("DataLink response for \(target): none: \(error)")
            return (.failure(error), nil)
        case .success(var result):
            // Servers echo the key (QEAx01 "We could not recognize your API key: '…'"), in
            // headers too; bodies are scrubbed in `judge` (errors are built from the original,
            // redacted to `<redacted>`, successes hand out a scrubbed copy). An export status's
            // link is hidden in what is shown (log, errors), never in the body handed out.
            result.headers = result.headers.mapValues { redactor($0) }
            let shown = prepared.export ? redactor.hidingURLs(in: result.body) : redactor
            logResponse(result, target: target, redactor: shown)
            return (judge(result, request: prepared, attempt: attempt, redactor: shown), RetryAfter.parse(result.headers["retry-after"]))
        }
    }

    /// The length first (an unusable `Content-Length`, or a body of another length, is a
    /// malformed response; a body past the limit is too large, whatever the status), then the
    /// status, then the `QE…` code of the error body; a 2xx must also have the expected content
    /// type and shape.
    func judge(
        _ result: TransferResult, request: PreparedRequest, attempt: Int,
        redactor: Redactor? = nil
    ) -> Result<DataLinkResponse, DataLinkError> {
        let redactor = redactor ?? self.redactor
        let target = request.target
        let status = result.status
        switch ContentLength.parse(result.headers["content-length"]) {
        case .failure(let problem):
            return .failure(.malformedResponse(target, reason: redactor.oneLine(problem.reason, limit: 200)))
        case .success(let declared):
            if !ContentLength.matches(result.body.count, declared: declared, headers: result.headers, status: status) {
                return .failure(
                    .malformedResponse(target, reason: "the body has \(result.body.count) bytes, Content-Length declares \(declared ?? 0)"))
            }
        }
        if result.body.count > configuration.maximumResponseSize {
            return .failure(
                .responseTooLarge(target, limit: configuration.maximumResponseSize, declaredLength: nil, received: result.body.count))
        }
        let contentType = result.headers["content-type"]
        let keySent = configuration.apiKey != nil
        if (200 ..< 300).contains(status), status != 202 {
            if let problem = shapeProblem(result.body, contentType: contentType, format: request.format) {
                return .failure(
                    .unexpectedResponse(
                        target, status: status, contentType: contentType.map { redactor.oneLine($0, limit: 100) },
                        bodyPrefix: "\(problem): \(redactor.bodyPrefix(result.body))"))
            }
            // A 2xx body may echo the key too, and then fail to decode: the caller gets it with
            // the key overwritten, so no decoder error or excerpt built from it can hold any of it.
            return .success(
                DataLinkResponse(
                    target: target, status: status, headers: result.headers, body: redactor.scrub(result.body),
                    url: Redactor.keptURL(result.url ?? request.url), attempts: attempt))
        }
        let body = DataLinkErrorBody.parse(result.body, redactor: redactor)
        let code = body?.code ?? ""
        let retryAfter = RetryAfter.parse(result.headers["retry-after"])
        let error: DataLinkError
        switch status {
        case 202: error = .notReady(target, retryAfter: retryAfter, body)
        case 401: error = .unauthorized(target, status: status, body, keySent: keySent)
        case 403: error = .forbidden(target, status: status, body, keySent: keySent)
        case 404: error = .notFound(target, body)
        case 410: error = .gone(target, body)
        case 429: error = .rateLimited(target, retryAfter: retryAfter, body)
        case 400 ..< 500 where code.hasPrefix("QEA"): error = .unauthorized(target, status: status, body, keySent: keySent)
        case 400 ..< 500 where code.hasPrefix("QEP"): error = .forbidden(target, status: status, body, keySent: keySent)
        case 400 ..< 500: error = .clientError(target, status: status, body)
        case 500 ..< 600: error = .serverError(target, status: status, body)
        default:
            error = .unexpectedResponse(
                target, status: status, contentType: contentType.map { redactor.oneLine($0, limit: 100) },
                bodyPrefix: redactor.bodyPrefix(result.body))
        }
        return .failure(error)
    }

    /// Why a success body is not the asked-for format, or nil when it is.
    private func shapeProblem(_ body: Data, contentType: String?, format: ResponseFormat) -> String? {
        let mediaType = contentType?.split(separator: ";").first.map { $0.trimmingASCIIWhitespace().lowercased() } ?? ""
        let first = body.first { !Redactor.isASCIIWhitespace($0) }
        switch format {
        case .json:
            guard mediaType == "application/json" || mediaType.hasSuffix("+json") else { return "expected JSON" }
            guard first == UInt8(ascii: "{") else { return "expected a JSON object" }
        case .csv:
            guard ["text/csv", "application/csv", "text/plain"].contains(mediaType) else { return "expected CSV" }
            guard first != UInt8(ascii: "<"), first != UInt8(ascii: "{") else { return "expected CSV" }
        }
        return nil
    }

    // MARK: Debug hook

    func log(_ message: @autoclosure () -> String) {
        guard let log = configuration.log else { return }
        log(redactor(message()))
    }

    private func logRequest(_ request: PreparedRequest, attempt: Int) {
        guard configuration.log != nil else { return }
        var lines = ["DataLink request for \(request.target) (attempt \(attempt) of \(configuration.retryPolicy.maxAttempts)):"]
        lines.append("GET \(Redactor.displayURL(request.url)) HTTP/1.1")
        lines.append("Accept: \(request.format.acceptHeader)")
        lines.append("User-Agent: \(Self.userAgent)")
        if configuration.apiKey != nil { lines.append("\(Self.keyHeader): \(Redactor.placeholder)") }
        log(lines.joined(separator: "\n"))
    }

    private func logResponse(_ result: TransferResult, target: DataLinkTarget, redactor: Redactor) {
        guard let log = configuration.log else { return }
        var lines = ["DataLink response for \(target): HTTP \(result.status)"]
        for (name, value) in result.headers.sorted(by: { $0.key < $1.key }) {
            lines.append("\(name): \(redactor.oneLine(value, limit: 300))")
        }
        lines.append("body (\(result.body.count) bytes): \(redactor.bodyPrefix(result.body, limit: 256))")
        log(redactor(lines.joined(separator: "\n")))
    }
}
