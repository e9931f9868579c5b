import Foundation
import Testing

/// `generate` refuses a calendar that runs past 9999-12-31, the last date a table holds (every
/// stored date must come back from `export` through `import`).
@Suite struct DateRangeCommandTests {
    @Test func generateRefusesDaysPastTheLastStorableDate() throws {
        let dir = NSTemporaryDirectory() + "/colonnade-daterange-\(getpid())-\(UInt32.random(in: 0 ... .max))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let refused = colonnade("generate", "--tickers", "2", "--days", "10", "--start", "9999-12-25", "--snapshot", dir + "/late.snapshot")
        #expect(refused.status == 2, "\(refused)")
        #expect(refused.standardError.contains("run past 9999-12-31"), "\(refused.standardError)")
        #expect(!FileManager.default.fileExists(atPath: dir + "/late.snapshot"))

        // 23 weekdays from 9999-12-01 end on Friday 9999-12-31; one more does not fit.
        let oneMore = colonnade("generate", "--tickers", "1", "--days", "24", "--start", "9999-12-01", "--snapshot", dir + "/ok.snapshot")
        #expect(oneMore.status == 2, "\(oneMore)")
        let fine = colonnade("generate", "--tickers", "1", "--days", "23", "--start", "9999-12-01", "--snapshot", dir + "/ok.snapshot")
        #expect(fine.status == 0, "\(fine)")
        let csv = colonnade("export", "--snapshot", dir + "/ok.snapshot", "--format", "csv")
        #expect(csv.status == 0, "\(csv)")
        #expect(csv.standardOutput.contains("9999-12-31"), "\(csv.standardOutput.suffix(200))")
        #expect(!csv.standardOutput.contains("10000-"))
    }
}
