import Colonnade

/// `colonnade verify`: every checksum and invariant; exit 1 with what is wrong.
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
            let progress = ProgressLine("verifying", total: info?.rowCount, enabled: context.standardError.isTerminal,
                                        writer: context.standardError, delay: ImportProgressLine.delay(environment: context.environment))
            defer { progress.finish() }
            return QuoteTable.verifySnapshot(at: file) { bytes in
                progress.advance(rows: Int(Double(rows) * Double(bytes) / Double(payload)), bytes: bytes)
            }
        }
        if result.isValid {
            let summary = result.info.map { "\($0.rowCount.groupedText) rows, \($0.tickerCount.groupedText) tickers, \($0.schema.count + 1) columns" } ?? ""
            try context.standardOutput.writeLine(TerminalText.escaped("ok: \(path): \(summary); every checksum and invariant holds"))
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
        try context.standardError.writeLine(TerminalText.escaped("\(path): \(result.problems.count) problem\(result.problems.count == 1 ? "" : "s") found"))
        return ExitStatus.failure
    }
}
