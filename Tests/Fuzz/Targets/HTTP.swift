// fuzz-modules: Colonnade DataLink DataLinkFormat
//
// HTTP response handling: status, headers and body → the DataLink client's verdict
// (`DataLinkClient.judge`, the pure step after the transfer: success, or a typed error with the
// parsed `quandl_error` body), the `Retry-After` parse and the retry delay it leads to, the
// error's text, the table cursor, and — for a success — the decode `fetch` runs on the body.
//
// Input: byte 0 picks the status (a list of interesting ones, or any 100…699), byte 1 the request
// (JSON/CSV time series, a table page), whether a key was sent and whether the response limit is
// small (256 bytes); then header lines `name: value` up to an empty line; the rest is the body.
// The key planted in the configuration must never appear in an error's text (the client's or the
// decoder's) nor in a success body as the client hands it on (overwritten by `*`, byte for byte).
// Lengths (issue 28): a success always has a body within the limit and a `Content-Length` that
// parses and matches it (unless a content encoding makes it the encoded size); a header that
// does not parse is always a malformed response. The same bytes also drive the table page cap.

import Foundation
@testable import DataLink
import Colonnade
import DataLinkFormat

let key = "FUZZ-k3y-9f8e7d6c5b4a"
let statuses = [200, 201, 202, 204, 206, 301, 304, 400, 401, 403, 404, 409, 410, 413, 414, 422, 429, 500, 502, 503, 504]

let smallLimit = 256
// Nothing is sent: the target judges responses it makes up (`judge` is the step after a transfer).
let noTransport = HTTPTransport(
    name: "none", get: { _, _, _, _, _ in .failure(.cancelled) }, download: { _, _, _, _ in .failure(.cancelled) })
let clients: [DataLinkClient] = [
    DataLinkClient(configuration: DataLinkConfiguration(transport: noTransport, apiKey: APIKey(key))),
    DataLinkClient(configuration: DataLinkConfiguration(transport: noTransport, apiKey: nil)),
    DataLinkClient(configuration: DataLinkConfiguration(transport: noTransport, apiKey: APIKey(key), maximumResponseSize: smallLimit)),
    DataLinkClient(configuration: DataLinkConfiguration(transport: noTransport, apiKey: nil, maximumResponseSize: smallLimit)),
]

let requests: [PreparedRequest] = {
    let client = clients[0]
    do {
        return [
            try client.datasetRequest(database: "WIKI", ticker: "BRK.A", from: nil, to: nil, format: .json, options: DatasetOptions()),
            try client.datasetRequest(database: "WIKI", ticker: "AAPL", from: nil, to: nil, format: .csv, options: DatasetOptions()),
            try client.tableRequest(
                "WIKI/PRICES", codes: ["AAPL", "BRK_A"], from: nil, to: nil, columns: nil, perPage: nil, cursorID: nil),
        ]
    } catch {
        fatalError("fuzz requests: \(error)")
    }
}()

// LeakSanitizer: see Support/Harness.swift (`buildOnce`).
@_cdecl("LLVMFuzzerInitialize")
public func initialize(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
) -> CInt {
    lsanDisable()
    _ = clients.count + requests.count
    lsanEnable()
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 2 else { return -1 }
    let statusByte = Int(data[0])
    let status = statusByte < statuses.count * 8 ? statuses[statusByte % statuses.count] : 100 + (statusByte * 7919) % 600
    let request = requests[Int(data[1]) % requests.count]
    let client = clients[Int(data[1] >> 6) & 3]

    // Headers: lines up to the first empty line; names lower-cased as the transports store them.
    let rest = UnsafeBufferPointer(start: data + 2, count: size - 2)
    var headers: [String: String] = [:]
    var bodyStart = rest.count
    var lineStart = 0
    var i = 0
    while i < rest.count {
        if rest[i] == 0x0A {
            let line = String(decoding: rest[lineStart ..< i], as: UTF8.self)
            if line.isEmpty || line == "\r" {
                bodyStart = i + 1
                break
            }
            if let colon = line.firstIndex(of: ":") {
                let name = line[..<colon].lowercased()
                let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                headers[name] = headers[name].map { $0 + ", " + value } ?? value
            }
            lineStart = i + 1
        }
        i += 1
    }
    let body = Data(rest[min(bodyStart, rest.count)...])

    let result = TransferResult(status: status, headers: headers, body: body, url: request.url)
    let retryAfter = RetryAfter.parse(headers["retry-after"])
    for attempt in 1 ... 3 {
        _ = client.configuration.retryPolicy.delay(afterAttempt: attempt, retryAfter: retryAfter, random: Double(attempt) / 4)
    }
    // The page cap from the same bytes: never below 2, never above the documented maximum.
    if size >= 6 {
        let from = Day(daysSinceEpoch: Int32(truncatingIfNeeded: Int(data[2]) << 8 | Int(data[3])) - 20_000)
        let to = Day(daysSinceEpoch: from.daysSinceEpoch + Int32(data[4]) - 16)
        let cap = DataLinkClient.pageLimit(tickers: Int(data[5]), from: from, to: to, perPage: Int(data[0]) % 4 == 0 ? nil : Int(data[0]))
        precondition(cap >= (data[5] == 0 ? DataLinkClient.maximumPages : 2) && cap <= DataLinkClient.maximumPages, "page cap \(cap)")
    }
    let length = ContentLength.parse(headers["content-length"])
    let verdict = client.judge(result, request: request, attempt: 1)
    if case .failure = length {
        guard case .failure(.malformedResponse) = verdict else { fatalError("an unparsable Content-Length was not refused: \(headers)") }
    }
    switch verdict {
    case .failure(let error):
        let text = "\(error) \(String(describing: error)) \(error.isRetryable)"
        // Only the client configured with the key knows it; the anonymous one may echo a body
        // that happens to hold the same text (the first finding of this target was that, a
        // harness bug).
        if client.configuration.apiKey != nil && text.contains(key) { fatalError("the API key leaked into an error: \(text)") }
    case .success(let response):
        // A success body comes back with the key overwritten by `*`, byte for byte (Redactor.scrub):
        // same length, every other byte as sent, and no copy of the key left.
        precondition(response.status == status && response.body.count == body.count)
        precondition(body.count <= client.configuration.maximumResponseSize, "a body past the limit was accepted")
        if case .success(let declared?) = length, headers["content-encoding"] == nil {
            precondition(declared == body.count || status == 204 || status == 304 || status < 200, "a body of another length than declared")
        }
        precondition(zip(response.body, body).allSatisfy { $0 == $1 || $0 == UInt8(ascii: "*") }, "the body changed beyond the key")
        if client.configuration.apiKey != nil {
            precondition(response.body.range(of: Data(key.utf8)) == nil, "the API key is still in a success body")
        }
        if case .table = request.target {
            _ = try? DataLinkCursor.nextCursorID(inJSON: response.body)
        }
        // What `fetch` does next with the body; its decode errors must not hold the key either.
        do {
            let decoded = try response.body.withUnsafeBytes { bytes in
                try QuoteDecoder.decode(bytes, ticker: request.format == .csv ? "AAPL" : nil, source: "WIKI/AAPL")
            }
            _ = decoded.table.rowCount
        } catch {
            let text = "\(error)"
            if client.configuration.apiKey != nil && text.contains(key) { fatalError("the API key leaked into a decode error: \(text)") }
        }
    }
    return 0
}
