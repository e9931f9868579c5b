#if canImport(Glibc)
import Glibc
#endif

extension SnapshotStore {
    /// What the current version holds (as `QuoteTable.snapshotInfo(at:)` for one file): format
    /// 2.0, the current version's rows, tickers and columns (its files merged, without payload
    /// verification), and the bytes of its files as the size.
    public func info() throws(SnapshotError) -> SnapshotInfo {
        let (log, resolved) = try readLog(path)
        if log.isSingleFile { return try QuoteTable.snapshotInfo(at: path) }
        let directory = dataDirectory(resolved, log)
        var payload = 0, footer = 0
        for index in log.current.files {
            let i = try Self.checkedReader(log.files[index], directory: directory).info
            payload += i.payloadBytes
            footer += i.footerBytes
        }
        let table = try Self.merge(log.current, of: log, directory: directory, verify: false, threads: QueryOptions.availableCores)
        return SnapshotInfo(
            path: path, majorVersion: SnapshotLog.majorVersion, minorVersion: SnapshotLog.minorVersion,
            fileSize: log.bytes(of: log.current), rowCount: table.rowCount, tickerCount: table.tickers.count,
            schema: table.schema, dateColumnName: table.dateColumnName, metadata: table.metadata,
            payloadBytes: payload, footerBytes: footer, hasBlockSummaries: table.hasSummaries,
            nullableColumns: table.columns.indices.filter { table.columns[$0].validity != nil }.map { table.schema[$0].identifier })
    }

    /// Checks the store completely: the version log (checksums, structure), then every data file
    /// any version names — present, of the size and footer checksum the log records, and sound
    /// by `QuoteTable.verifySnapshot(at:)` (every payload checksum, block summary, date order) —
    /// and finally the current version's files merged, against the row count the log records.
    /// Problems in a data file name that file.
    public func verify(progress: (@Sendable (Int) -> Void)? = nil) -> SnapshotVerification {
        let log: SnapshotLog, resolved: String
        do {
            (log, resolved) = try readLog(path)
        } catch {
            return SnapshotVerification(path: path, info: nil, problems: [SnapshotProblem(error)])
        }
        if log.isSingleFile { return QuoteTable.verifySnapshot(at: path, progress: progress, single: true) }
        let directory = dataDirectory(resolved, log)
        var problems = [SnapshotProblem]()
        var used = Set<Int>()
        for v in log.versions { used.formUnion(v.files) }
        for index in used.sorted() {
            let file = log.files[index]
            let users = log.versions.filter { $0.files.contains(index) }.map { String($0.number) }
            do throws(SnapshotError) {
                _ = try Self.checkedReader(file, directory: directory)
            } catch {
                problems.append(
                    SnapshotProblem(
                        section: "version log", column: nil, ticker: nil, row: nil,
                        error: .inconsistentData(
                            file: error.file, section: "data file of version \(users.joined(separator: ", "))",
                            detail: error.description)))
                continue
            }
            problems += QuoteTable.verifySnapshot(at: directory + "/" + file.name, progress: progress, single: true).problems
        }
        var info: SnapshotInfo?
        if problems.isEmpty {
            do throws(SnapshotError) {
                let table = try Self.merge(log.current, of: log, directory: directory, verify: false, threads: QueryOptions.availableCores)
                if table.rowCount != log.current.rowCount {
                    problems.append(
                        SnapshotProblem(
                            .inconsistentData(
                                file: path, section: "version log",
                                detail:
                                    "version \(log.current.number) holds \(table.rowCount) rows, the log records \(log.current.rowCount)")))
                }
                info = try self.info()
            } catch {
                problems.append(SnapshotProblem(error))
            }
        }
        return SnapshotVerification(path: path, info: info, problems: problems)
    }
}
