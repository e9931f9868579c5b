import Foundation
import Testing
@testable import Colonnade
#if canImport(Glibc)
import Glibc
#endif

/// A `SnapshotDraft` whose payload write fails: the failure is kept and thrown by `commit`, which
/// leaves the file at the path byte for byte as it was and removes the temporary. The failure is
/// real, not mocked: the draft's descriptor is swapped (`dup2`) for one open read-only on the same
/// temporary, so its `pwrite` fails with EBADF as a write to a file that cannot be written does.
/// (A file-size limit cannot do it: the draft's `fallocate` of the payload area fails first, with
/// EFBIG; the CLI test `ImportWriteFailureTests` covers that.)
@Suite struct SnapshotDraftFailureTests {
    /// A table of `rows` rows of one ticker and one value column.
    static func table(rows: Int) throws -> QuoteTable {
        let dates = Column<Int32>((0 ..< rows).map { Int32(16_000 + $0) })
        let closes = Column<Double>((0 ..< rows).map { Double($0) * 0.25 })
        return try QuoteTable(
            sortingRows: [TickerEntry(symbol: "AAPL")], rowTickers: nil, dates: dates,
            schema: [ColumnDescriptor(name: "Close", type: .float64)], columns: [AnyColumn(closes)])
    }

    /// The descriptor this process holds on the temporary in `directory` whose name starts with
    /// `prefix`, and that temporary's path.
    static func temporaryDescriptor(in directory: String, prefix: String) throws -> (fd: Int32, path: String) {
        for name in try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
            guard let fd = Int32(name),
                let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)"),
                target.hasPrefix(directory + "/" + prefix)
            else { continue }
            return (fd, target)
        }
        throw CocoaError(.fileNoSuchFile)
    }

    @Test func aFailedPayloadWriteIsThrownByCommitAndLeavesTheSnapshotAsItWas() throws {
        let directory = NSTemporaryDirectory() + "colonnade-draft-\(getpid())-\(UInt64.random(in: 0 ... .max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/quotes.snapshot"
        try Self.table(rows: 3).save(to: path)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let rows = 1_000
        let table = try Self.table(rows: rows)
        let values = (0 ..< rows).map { Double($0) }

        // Control: the same writes through the draft's own descriptor fail nothing; a table that
        // is not laid out in the draft then makes `commit` return false (nothing thrown).
        let control = try SnapshotDraft(replacing: path, rowCount: rows, valueWidths: [8])
        values.withUnsafeBytes { control.write($0.baseAddress!, count: $0.count, intoPayload: 1, at: 0) }
        #expect(try control.commit(table, durable: false) == false)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == ["quotes.snapshot"])

        let draft = try SnapshotDraft(replacing: path, rowCount: rows, valueWidths: [8])
        let (fd, temporary) = try Self.temporaryDescriptor(in: directory, prefix: ".quotes.snapshot.tmp-")
        let readOnly = open(temporary, O_RDONLY | O_CLOEXEC)
        try #require(readOnly >= 0)
        try #require(dup2(readOnly, fd) == fd)
        close(readOnly)
        values.withUnsafeBytes { draft.write($0.baseAddress!, count: $0.count, intoPayload: 1, at: 0) }
        let error = #expect(throws: SnapshotError.self) { _ = try draft.commit(table, durable: false) }
        #expect(error == .ioError(file: path, operation: "write", errno: EBADF))
        #expect(error?.description.hasPrefix(path + ": write failed: ") == true, "\(String(describing: error))")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == ["quotes.snapshot"], "no temporary left")
        #expect(try QuoteTable.load(from: path).rowCount == 3)
    }
}
