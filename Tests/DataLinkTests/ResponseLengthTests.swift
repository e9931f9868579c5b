import Colonnade
import ColonnadeTestSupport
@testable import DataLink
import DataLinkURLSession
import Foundation
import Testing

/// `Content-Length` read strictly, a body compared with it, and a compression bomb's size
/// reported as decoded (issue 28, items 4 and 5).
@Suite struct ResponseLengthTests {
    @Test func contentLengthParsesDigitsThatFitAndNothingElse() {
        let accepted: [(String?, Int?)] = [
            (nil, nil), ("0", 0), ("42", 42), (" 42 ", 42), ("0042", 42), ("42, 42", 42), ("42,42,42", 42),
            ("9223372036854775807", Int.max),
        ]
        for (value, expected) in accepted {
            guard case .success(let length) = ContentLength.parse(value) else {
                Issue.record("refused \(String(describing: value))")
                continue
            }
            #expect(length == expected, "\(String(describing: value))")
        }
        let refused = [
            "", " ", "-1", "+1", "1e3", "0x10", "4 2", "42,", ",42", "42, 43", "12abc", "9223372036854775808",
            "18446744073709551616", "1000000000000000000000000000000", "١٢", "42\u{0}",
        ]
        for value in refused {
            guard case .failure(let problem) = ContentLength.parse(value) else {
                Issue.record("accepted '\(value)'")
                continue
            }
            #expect(!problem.reason.contains("\u{0}"), "control characters are not quoted raw")
        }
    }

    /// `judge` (the step the fuzz target drives) refuses an unusable length and a body of
    /// another length than declared, before looking at the status.
    @Test func judgeRefusesLengthsThatDoNotMatchTheBody() throws {
        let client = DataLinkClient(configuration: DataLinkConfiguration(transport: .urlSession, maximumResponseSize: 100))
        let request = try client.datasetRequest(
            database: "WIKI", ticker: "AAPL", from: nil, to: nil, format: .csv, options: DatasetOptions())
        let body = Data("Date,Close\n2014-01-02,1.5\n".utf8)
        func verdict(_ headers: [String: String], body: Data = body, status: Int = 200) -> Result<DataLinkResponse, DataLinkError> {
            client.judge(
                TransferResult(
                    status: status, headers: headers.merging(["content-type": "text/csv"]) { a, _ in a },
                    body: body, url: request.url), request: request, attempt: 1)
        }
        guard case .success = verdict(["content-length": "\(body.count)"]) else {
            Issue.record("an honest length refused")
            return
        }
        guard case .success = verdict([:]) else {
            Issue.record("no length refused")
            return
        }
        guard case .success = verdict(["content-length": "9", "content-encoding": "gzip"]) else {
            Issue.record("a compressed body's length is of the encoded bytes")
            return
        }
        for (headers, status) in [
            (["content-length": "\(body.count + 1)"], 200), (["content-length": "3"], 404),
            (["content-length": "18446744073709551616"], 200), (["content-length": "1, 2"], 500),
        ] {
            guard case .failure(.malformedResponse(_, let reason)) = verdict(headers, status: status) else {
                Issue.record("accepted \(headers) with status \(status)")
                continue
            }
            #expect(!reason.isEmpty)
        }
        guard case .failure(.responseTooLarge(_, limit: 100, declaredLength: nil, received: 101)) = verdict([:], body: Data(count: 101))
        else {
            Issue.record("a body past the limit accepted")
            return
        }
    }

    /// A gzip bomb: a small compressed body (its `Content-Length` far under the limit) that
    /// decodes past it. The transfer stops at the limit, and the error reports the decoded
    /// count, not the declared (compressed) length.
    @Test func gzipBombReportsTheDecodedSize() async throws {
        let limit = 1 << 20
        let bomb = GzipBomb.zeros(decodedSize: 64 << 20)
        #expect(bomb.count < limit / 2)
        try await LoopbackHTTPServer.run({ _ in
            .respond(status: 200, headers: ["Content-Type": "text/csv", "Content-Encoding": "gzip"], body: bomb)
        }) { server in
            let client = DataLinkClient(configuration: testConfiguration(server, maximumResponseSize: limit))
            let error = await dataLinkError { try await client.datasetData(database: "WIKI", ticker: "AAPL", format: .csv) }
            guard case .responseTooLarge(_, limit: limit, declaredLength: nil, received: let received?)? = error else {
                Issue.record("expected responseTooLarge with the decoded count, got \(String(describing: error))")
                return
            }
            #expect(received > limit && received <= limit + TransferProcess.maximumFrame)
            let text = String(describing: error!)
            #expect(text.contains("\(received) bytes arrived, decoded"), "\(text)")
            #expect(!text.contains("\(bomb.count)"), "the compressed length is not the size reported: \(text)")
        }
    }

    @Test func pageLimitCountsWeekdaysAgainstADayByDayReference() throws {
        // 1970-01-01 was a Thursday; count Monday to Friday one day at a time.
        func reference(_ from: Int32, _ to: Int32) -> Int {
            guard to >= from else { return 0 }
            var count = 0
            for day in Int(from) ... Int(to) where (day % 7 + 7 + 3) % 7 < 5 { count += 1 }
            return count
        }
        var rng = SplitMix64(seed: 28)
        for _ in 0 ..< 2_000 {
            let from = Int32(truncatingIfNeeded: Int(rng.next() % 40_000)) - 20_000
            let to = from + Int32(rng.next() % 60) - 5
            #expect(
                DataLinkClient.weekdays(from: Day(daysSinceEpoch: from), to: Day(daysSinceEpoch: to)) == reference(from, to),
                "\(from)…\(to)")
        }
        let monday = try #require(Day("2014-01-06")), friday = try #require(Day("2014-01-10"))
        #expect(DataLinkClient.pageLimit(tickers: 1, from: monday, to: friday, perPage: nil) == 3)  // ceil(5 / 10,000) + 2
        #expect(DataLinkClient.pageLimit(tickers: 3, from: monday, to: friday, perPage: 4) == 6)  // ceil(15 / 4) + 2
        #expect(DataLinkClient.pageLimit(tickers: 3, from: nil, to: friday, perPage: 4) == DataLinkClient.maximumPages)
        #expect(DataLinkClient.pageLimit(tickers: 0, from: monday, to: friday, perPage: 4) == DataLinkClient.maximumPages)
    }
}

/// A gzip member whose DEFLATE stream is fixed-Huffman blocks of one literal zero followed by
/// <length 258, distance 1> matches: about 13 bits per 258 decoded bytes.
enum GzipBomb {
    static func zeros(decodedSize: Int) -> Data {
        var bits = BitWriter()
        bits.write(1, count: 1)  // BFINAL
        bits.write(1, count: 2)  // BTYPE = 01, fixed Huffman (LSB first)
        bits.writeCode(0x30, length: 8)  // literal 0
        var produced = 1
        while produced + 258 <= decodedSize {
            bits.writeCode(0b1100_0101, length: 8)  // length code 285: 258 bytes
            bits.writeCode(0, length: 5)  // distance code 0: distance 1
            produced += 258
        }
        bits.writeCode(0, length: 7)  // end of block (256)
        var data = Data([0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 0xFF])
        data.append(contentsOf: bits.finished)
        // CRC-32 and size: never reached by a client that stops at its limit; zeros.
        data.append(contentsOf: [0, 0, 0, 0])
        let size = UInt32(truncatingIfNeeded: produced)
        data.append(contentsOf: [UInt8(size & 0xFF), UInt8((size >> 8) & 0xFF), UInt8((size >> 16) & 0xFF), UInt8(size >> 24)])
        return data
    }

    /// DEFLATE's bit order: values LSB first, Huffman codes MSB first.
    struct BitWriter {
        var bytes: [UInt8] = []
        var current: UInt8 = 0
        var used = 0

        mutating func write(_ value: UInt32, count: Int) {
            for i in 0 ..< count { push(UInt8((value >> UInt32(i)) & 1)) }
        }

        mutating func writeCode(_ code: UInt32, length: Int) {
            for i in stride(from: length - 1, through: 0, by: -1) { push(UInt8((code >> UInt32(i)) & 1)) }
        }

        private mutating func push(_ bit: UInt8) {
            current |= bit << UInt8(used)
            used += 1
            if used == 8 {
                bytes.append(current)
                current = 0
                used = 0
            }
        }

        /// Call once at the end: pads the last byte.
        var finished: [UInt8] { used > 0 ? bytes + [current] : bytes }
    }
}
