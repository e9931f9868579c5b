import Foundation
import Colonnade

/// `colonnade verify`: every checksum and invariant; exit 1 with what is wrong. With
/// `--adjustments`, then every ticker's adjusted columns against WIKI's rule (docs/ADJUSTMENTS.md);
/// exit 3 when one breaks it.
struct VerifyCommand: Command {
    var spec: CommandSpec { .verify }

    func run(_ parsed: ParsedArguments, context: CommandContext) throws -> Int32 {
        let source = try SnapshotLocation.forReading(parsed[Options.snapshot], context: context)
        let path = source.displayName
        // On a terminal, a check over a second shows its progress: payload bytes checked, and the
        // rows they stand for.
        let result = try source.withFile { file in
            let info = try? QuoteTable.snapshotInfo(at: file)
            let rows = info?.rowCount ?? 0, payload = max(1, info?.payloadBytes ?? 1)
            let progress = ProgressLine(
                "verifying", total: info?.rowCount, enabled: context.standardError.isTerminal,
                writer: context.standardError, delay: context.progressDelay)
            defer { progress.finish() }
            return QuoteTable.verifySnapshot(at: file) { bytes in
                progress.advance(rows: Int(Double(rows) * Double(bytes) / Double(payload)), bytes: bytes)
            }
        }
        if result.isValid {
            let summary =
                result.info.map { "\($0.rowCount.groupedText) rows, \($0.tickerCount.groupedText) tickers, \($0.schema.count + 1) columns" }
                ?? ""
            try context.standardOutput.writeLine(TerminalText.escaped("ok: \(path): \(summary); every checksum and invariant holds"))
            if parsed[Options.adjustments] {
                // Verified just now: loaded without checking the checksums a second time.
                return try Self.checkAdjustments(try source.load(verify: false), path: path, context: context)
            }
            return ExitStatus.success
        }
        // A file that cannot be opened at all is an ordinary error, with its hint.
        if result.info == nil, result.problems.count == 1, let only = result.problems.first {
            switch only.error {
            case .noSuchFile, .permissionDenied, .isADirectory, .notASnapshot, .notARegularFile: throw only.error
            default: break
            }
        }
        for problem in result.problems {
            var place = [problem.section]
            if let c = problem.column { place.append("column \(c)") }
            if let t = problem.ticker { place.append("ticker \(t)") }
            if let r = problem.row { place.append("row \(r)") }
            // Sections, columns, tickers and messages come from the file: escaped.
            try context.standardError.writeLine(TerminalText.escaped("error: [\(place.joined(separator: ", "))] \(problem.error)"))
        }
        try context.standardError.writeLine(
            TerminalText.escaped("\(path): \(result.problems.count) problem\(result.problems.count == 1 ? "" : "s") found"))
        return ExitStatus.failure
    }

    /// `--adjustments`: each failing ticker's first stale day on standard error, exit status 3
    /// (`ExitStatus.staleAdjustments`); a table without WIKI's columns has nothing to check.
    static func checkAdjustments(_ table: QuoteTable, path: String, context: CommandContext) throws -> Int32 {
        var problems = [AdjustmentProblem]()
        var failure: AdjustmentError?
        do { problems = try table.adjustmentProblems() } catch { failure = error }
        switch failure {
        case .missingColumns?, .noAdjustedColumns?:
            context.note("\(path): \(failure.map(String.init(describing:)) ?? ""); no adjusted columns to check")
            return ExitStatus.success
        case let error?:
            throw error
        case nil:
            break
        }
        if problems.isEmpty {
            try context.standardOutput.writeLine(
                TerminalText.escaped(
                    "ok: \(path): the adjusted columns of every ticker (\(table.tickers.count.groupedText)) follow WIKI's rule"))
            return ExitStatus.success
        }
        for p in problems {
            let what =
                p.column == "adj_close" || p.column == "adj_volume"
                ? "\(p.column) ratio to the day before is \(p.actual), the rule gives \(p.expected)"
                : "\(p.column) is \(p.actual), the rule gives \(p.expected)"
            try context.standardError.writeLine(
                TerminalText.escaped(
                    "error: [ticker \(p.ticker), \(Day(daysSinceEpoch: p.day)), row \(p.row)] stale adjusted history: \(what) "
                        + "(relative difference \(String(format: "%.3g", p.relativeError)))"))
        }
        try context.standardError.writeLine(
            TerminalText.escaped(
                "\(path): \(problems.count.groupedText) ticker\(problems.count == 1 ? "" : "s") with stale adjusted history"))
        try context.standardError.writeLine(
            "hint: 'colonnade adjust --tickers \(problems.prefix(20).map(\.ticker).joined(separator: ","))' recomputes them from the raw prices and events"
        )
        return ExitStatus.staleAdjustments
    }
}
