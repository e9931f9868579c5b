/// One problem `QuoteTable.verifySnapshot(at:)` found, with where it is.
public struct SnapshotProblem: Sendable, Equatable, CustomStringConvertible {
    /// The part of the file: `header`, `trailer`, `footer`, a section tag (`COLS`, `TIDX`, `SUMM`, …)
    /// or `payload`.
    public var section: String
    /// The column (`close`, `close.validity`, `date`), when the problem is in one.
    public var column: String?
    /// The ticker, when the problem is in its rows.
    public var ticker: String?
    /// The first row concerned, when known.
    public var row: Int?
    /// The problem as an error value (what `load` would have thrown).
    public var error: SnapshotError

    /// One line: the error's description.
    public var description: String { error.description }
}

/// The result of checking a snapshot file completely.
public struct SnapshotVerification: Sendable {
    /// The path as given.
    public var path: String
    /// What the file holds, when its header and footer could be read.
    public var info: SnapshotInfo?
    /// Every problem found, in file order within each kind of check. Empty for a sound file.
    public var problems: [SnapshotProblem]
    /// Whether no problem was found.
    public var isValid: Bool { problems.isEmpty }
}

extension QuoteTable {
    /// Checks a snapshot file completely and reports every problem found, with where it is, rather
    /// than stopping at the first (for `colonnade verify`).
    ///
    ///     let report = QuoteTable.verifySnapshot(at: "snapshots/sample.snapshot")
    ///     for p in report.problems { print(p) }
    ///
    /// Checks, in order: header, trailer and footer (a problem there stops the check: nothing after
    /// it can be trusted); placement of every payload and the ticker index tiling the rows (all
    /// reported; a problem stops the check before payloads are read); every payload checksum;
    /// validity padding bits zero; payload padding bytes zero; dates within the storable range
    /// (0001-01-01 … 9999-12-31) and strictly ascending within each ticker; block summaries equal to the ones computed from the data.
    /// - Complexity: O(file) plus a block-summary pass over every column.
    public static func verifySnapshot(at path: String) -> SnapshotVerification {
        verifySnapshot(at: path, progress: nil)
    }

    /// `verifySnapshot(at:)`, calling `progress` with the bytes of each payload once its checksum
    /// is checked (from any thread), for a progress display.
    public static func verifySnapshot(at path: String, progress: (@Sendable (Int) -> Void)?) -> SnapshotVerification {
        // A 2.x store: its log and every version's files (SnapshotStore.verify).
        if SnapshotStore.isStore(path) { return SnapshotStore(at: path).verify(progress: progress) }
        return verifySnapshot(at: path, progress: progress, single: true)
    }

    /// `verifySnapshot(at:progress:)` of one 1.x snapshot file.
    static func verifySnapshot(at path: String, progress: (@Sendable (Int) -> Void)?, single: Bool) -> SnapshotVerification {
        let reader: SnapshotReader
        do {
            reader = try SnapshotReader(path: path)
        } catch {
            return SnapshotVerification(path: path, info: nil, problems: [SnapshotProblem(error)])
        }
        var problems = reader.layoutProblems().map { SnapshotProblem($0) }
        guard problems.isEmpty else { return SnapshotVerification(path: path, info: nil, problems: problems) }
        reader.mapping.populate()
        problems += reader.checksumProblems(progress: progress).map { SnapshotProblem($0) }
        problems += reader.paddingProblems()

        // Validity padding is checked per column here, so that every bad column is reported.
        problems += reader.validityPaddingProblems()
        do throws(SnapshotError) {
            // Dates outside the storable range first: a table cannot be built around them, so the
            // order is checked on the raw column and the summaries are not.
            let dates = try reader.dateColumn()
            let outOfRange = reader.dateRangeProblems(dates, everyRow: true, limit: 20)
            if let nullDate = reader.nullDateProblem(dates) {
                problems.append(nullDate)
                problems += outOfRange
            } else if outOfRange.isEmpty {
                let table = try reader.makeTable(checkDates: false, checkValidityPadding: false)
                problems += reader.dateProblems(table.dates, limit: 20)
                problems += reader.summaryProblems(table)
            } else {
                problems += outOfRange
                problems += reader.dateProblems(dates, limit: 20)
            }
        } catch {
            problems.append(SnapshotProblem(error))
        }
        // Cut shorter while being checked: what was found past the cut came from the zeros.
        if reader.mapping.lostPages { problems = [SnapshotProblem(reader.shrank)] }
        return SnapshotVerification(path: path, info: reader.info, problems: problems)
    }
}

extension SnapshotProblem {
    /// A problem from an error, its section and column taken from the error.
    init(_ error: SnapshotError, ticker: String? = nil, row: Int? = nil) {
        var section = "file", column: String?
        switch error {
        case let .checksumMismatch(_, s, c, _, _):
            section = s
            column = c
        case let .offsetOutOfRange(_, s, _), let .malformedFooter(_, s, _), let .inconsistentData(_, s, _): section = s
        case let .unsupportedSection(_, tag): section = tag
        case .malformedHeader, .unsupportedVersion, .notASnapshot: section = "header"
        case .truncated: section = "file"
        default: break
        }
        self.init(section: section, column: column, ticker: ticker, row: row, error: error)
    }
}

extension SnapshotReader {
    /// Payloads whose padding (between their length and the next multiple of 64) is not zero.
    func paddingProblems() -> [SnapshotProblem] {
        payloads.compactMap { name, p in
            let pad = UnsafeRawBufferPointer(start: mapping.base + p.offset + p.length, count: p.paddedLength - p.length)
            guard pad.contains(where: { $0 != 0 }) else { return nil }
            return SnapshotProblem(
                section: "payload", column: name, ticker: nil, row: nil,
                error: .inconsistentData(file: path, section: "payload", detail: "padding of \(name) is not zero"))
        }
    }

    /// Validity bitmaps with bits set past the last row.
    func validityPaddingProblems() -> [SnapshotProblem] {
        let rows = footer.rowCount
        guard rows & 63 != 0 else { return [] }
        return footer.columns.enumerated().compactMap { i, c in
            guard let v = c.validity else { return nil }
            let last = UInt64(littleEndian: mapping.bytes.loadUnaligned(fromByteOffset: v.offset + v.length - 8, as: UInt64.self))
            guard last >> UInt64(rows & 63) != 0 else { return nil }
            let name = footer.columnName(i) + ".validity"
            return SnapshotProblem(
                section: "payload", column: name, ticker: nil, row: rows,
                error: .inconsistentData(file: path, section: "payload", detail: "\(name) has bits set past row \(rows)"))
        }
    }

    /// Blocks whose stored summary differs from the one computed from the data (at most 20 per column).
    func summaryProblems(_ table: QuoteTable) -> [SnapshotProblem] {
        guard let stored = footer.summaries else { return [] }
        var out = [SnapshotProblem]()
        let all = [AnyColumn.int32(table.dates)] + table.columns
        for (i, column) in all.enumerated() {
            guard let s = stored[i] else { continue }
            let name = footer.columnName(i)
            var bad = [Int]()
            switch (column, s) {
            case let (.int32(c), .int32(s)): bad = Self.differingBlocks(c, s)
            case let (.int64(c), .int64(s)): bad = Self.differingBlocks(c, s)
            case let (.float32(c), .float32(s)): bad = Self.differingBlocks(c, s)
            case let (.float64(c), .float64(s)): bad = Self.differingBlocks(c, s)
            default: bad = [0]
            }
            for b in bad.prefix(20) {
                let rows = b * BlockSummaries<Int32>.blockRows
                out.append(
                    SnapshotProblem(
                        section: "SUMM", column: name, ticker: nil, row: rows,
                        error: .inconsistentData(
                            file: path, section: "SUMM",
                            detail: "block summary \(b) of \(name) (rows from \(rows)) does not match the data")))
            }
            if bad.count > 20 {
                out.append(
                    SnapshotProblem(
                        section: "SUMM", column: name, ticker: nil, row: nil,
                        error: .inconsistentData(
                            file: path, section: "SUMM",
                            detail: "\(bad.count - 20) more block summaries of \(name) do not match")))
            }
        }
        return out
    }

    /// Blocks where `stored` differs bit for bit from the summaries of `column`'s data.
    static func differingBlocks<T: ColumnElement>(_ column: Column<T>, _ stored: BlockSummaries<T>) -> [Int] {
        var bare = column
        bare.summaries = nil
        let fresh = BlockSummaries(of: bare)
        guard fresh.count == stored.count else { return [0] }
        func same(_ a: T, _ b: T) -> Bool {
            withUnsafeBytes(of: a) { pa in withUnsafeBytes(of: b) { pb in pa.elementsEqual(pb) } }
        }
        return (0 ..< fresh.count).filter { b in
            !(same(fresh.minimums[b], stored.minimums[b]) && same(fresh.maximums[b], stored.maximums[b])
                && fresh.unknownCounts[b] == stored.unknownCounts[b])
        }
    }
}
