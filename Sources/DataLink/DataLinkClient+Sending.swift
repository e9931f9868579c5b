import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension DataLinkClient {
    /// Sends `request`, retrying as the policy allows; the first success or the last error.
    func perform(_ request: PreparedRequest) async throws(DataLinkError) -> DataLinkResponse {
        let policy = configuration.retryPolicy
        let clock = ContinuousClock()
        let start = clock.now
        var attempt = 0
        while true {
            attempt += 1
            if Task.isCancelled { throw .cancelled(request.target) }
            let error: DataLinkError
            let (outcome, retryAfter) = await attemptOnce(request, attempt: attempt)
            switch outcome {
            case .success(let response): return response
            case .failure(let failure): error = failure
            }
            guard error.isRetryable, attempt < policy.maxAttempts else { throw error }
            let delay = policy.delay(afterAttempt: attempt, retryAfter: retryAfter, random: Double.random(in: 0..<1))
            guard clock.now - start + delay <= policy.totalBudget else {
                log("DataLink: giving up on \(request.target) after \(attempt) attempts: waiting \(DataLinkError.format(delay)) would exceed the \(DataLinkError.format(policy.totalBudget)) budget")
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

    /// One exchange: the judged outcome, and the server's `Retry-After` (honoured for any
    /// retryable answer, 503 included, not only 429 and 202).
    private func attemptOnce(_ prepared: PreparedRequest, attempt: Int) async -> (Result<DataLinkResponse, DataLinkError>, Duration?) {
        let target = prepared.target
        var request = URLRequest(url: prepared.url)
        request.httpMethod = "GET"
        request.setValue(prepared.format.acceptHeader, forHTTPHeaderField: "Accept")
        request.setValue(Self.userAgent, forHTTPHeaderField: "User-Agent")
        if let key = configuration.apiKey { request.setValue(key.value, forHTTPHeaderField: Self.keyHeader) }
        logRequest(prepared, attempt: attempt)

        let outcome = await HTTPTransfer.get(
            request, timeout: configuration.requestTimeout, limit: configuration.maximumResponseSize,
            keyHeader: configuration.apiKey == nil ? nil : Self.keyHeader)
        switch outcome {
        case .failure(let failure):
            let error: DataLinkError
            switch failure {
            case .cancelled:
                error = .cancelled(target)
            case .tooLarge(let declared):
                error = .responseTooLarge(target, limit: configuration.maximumResponseSize, declaredLength: declared)
            case .urlError(let code, let reason):
                error = code == NSURLErrorTimedOut
                    ? .timedOut(target, after: configuration.requestTimeout)
                    : .transport(target, reason: redactor.oneLine("\(reason) (URLError \(code))", limit: 300))
            }
            log("DataLink response for \(target): none: \(error)")
            return (.failure(error), nil)
        case .success(let result):
            let redactor = prepared.export ? self.redactor.hidingURLs(in: result.body) : self.redactor
            logResponse(result, target: target, redactor: redactor)
            return (judge(result, request: prepared, attempt: attempt, redactor: redactor), RetryAfter.parse(result.headers["retry-after"]))
        }
    }

    /// Status first, then the `QE…` code of the error body; a 2xx must also have the expected
    /// content type and shape.
    func judge(_ result: TransferResult, request: PreparedRequest, attempt: Int,
               redactor: Redactor? = nil) -> Result<DataLinkResponse, DataLinkError> {
        let redactor = redactor ?? self.redactor
        let target = request.target
        let status = result.status
        let contentType = result.headers["content-type"]
        let keySent = configuration.apiKey != nil
        if (200..<300).contains(status), status != 202 {
            if let problem = shapeProblem(result.body, contentType: contentType, format: request.format) {
                return .failure(.unexpectedResponse(
                    target, status: status, contentType: contentType.map { redactor.oneLine($0, limit: 100) },
                    bodyPrefix: "\(problem): \(redactor.bodyPrefix(result.body))"))
            }
            return .success(DataLinkResponse(
                target: target, status: status, headers: result.headers, body: result.body,
                url: result.url ?? request.url, attempts: attempt))
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
        case 400..<500 where code.hasPrefix("QEA"): error = .unauthorized(target, status: status, body, keySent: keySent)
        case 400..<500 where code.hasPrefix("QEP"): error = .forbidden(target, status: status, body, keySent: keySent)
        case 400..<500: error = .clientError(target, status: status, body)
        case 500..<600: error = .serverError(target, status: status, body)
        default:
            error = .unexpectedResponse(
                target, status: status, contentType: contentType.map { redactor.oneLine($0, limit: 100) },
                bodyPrefix: redactor.bodyPrefix(result.body))
        }
        return .failure(error)
    }

    /// Why a success body is not the asked-for format, or nil when it is.
    private func shapeProblem(_ body: Data, contentType: String?, format: DataLinkFormat) -> String? {
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
        lines.append("GET \(request.url.absoluteString) HTTP/1.1")
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
