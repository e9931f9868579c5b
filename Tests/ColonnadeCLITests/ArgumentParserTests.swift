import Colonnade
import Testing
@testable import ColonnadeCLI

@Suite struct ArgumentParserTests {
    @Test func filterParsesEveryOptionWithTypedAccessors() throws {
        let parsed = try ArgumentParser.parse(
            [
                "--snapshot", "data/q.snapshot", "--where", "80 < high < 83", "--tickers", "AAPL,MSFT",
                "--tickers", "FDX", "--from", "2005-01-01", "--to=2014-12-31", "--columns", "date, close",
                "--format", "csv", "--agg", "count(*),avg(close),corr(open, close)", "--by", "ticker",
                "--sort", "-date", "--limit", "5", "--timing", "--repeat", "3", "--threads=2",
            ], for: .filter)
        #expect(parsed[FilterCommand.Options.snapshot] == "data/q.snapshot")
        #expect(parsed[FilterCommand.Options.where] == "80 < high < 83")
        #expect(parsed[FilterCommand.Options.tickers] == ["AAPL", "MSFT", "FDX"])
        #expect(parsed[FilterCommand.Options.from] == Day(daysSinceEpoch: 12_784))
        #expect(parsed[FilterCommand.Options.to] == Day(daysSinceEpoch: 16_435))
        #expect(parsed[FilterCommand.Options.columns] == ["date", "close"])
        #expect(parsed[FilterCommand.Options.format] == .csv)
        #expect(parsed[FilterCommand.Options.agg] == ["count(*)", "avg(close)", "corr(open, close)"])
        #expect(parsed[FilterCommand.Options.by] == .ticker)
        #expect(parsed[FilterCommand.Options.sort] == ["-date"])
        #expect(parsed[FilterCommand.Options.limit] == 5)
        #expect(parsed[FilterCommand.Options.timing])
        #expect(!parsed[FilterCommand.Options.count])
        #expect(parsed[FilterCommand.Options.repeat] == 3)
        #expect(parsed[FilterCommand.Options.threads] == 2)
    }

    @Test func absentOptionsGiveDefaultsOrNothing() throws {
        let parsed = try ArgumentParser.parse([], for: .filter)
        #expect(parsed[FilterCommand.Options.snapshot] == nil, "no default: SnapshotLocation applies the default-snapshot rules")
        #expect(parsed[FilterCommand.Options.format] == nil, "no default: table, or what -o FILE's extension says")
        #expect(parsed[FilterCommand.Options.repeat] == 1)
        #expect(parsed[FilterCommand.Options.limit] == nil)
        #expect(parsed[FilterCommand.Options.from] == nil)
        #expect(parsed[FilterCommand.Options.tickers] == [])
        #expect(!parsed.isGiven(FilterCommand.Options.format))
        #expect(!parsed[FilterCommand.Options.timing])
    }

    /// Every option of every command parses as `--name value` and `--name=value`, with a value
    /// valid for its kind, alongside whatever the command requires.
    @Test(arguments: CommandSpec.colonnadeCommands)
    func everyOptionParsesInBothForms(spec: CommandSpec) throws {
        for option in spec.options {
            let base = minimalArguments(for: spec, besides: option)
            if option.isFlag {
                let parsed = try ArgumentParser.parse(base + [option.displayName], for: spec)
                #expect(parsed._typedValues(ofOptionNamed: option.name) == [""], "\(spec.name) \(option.displayName)")
                continue
            }
            let value = sampleValue(for: option)
            let separate = try ArgumentParser.parse(base + [option.displayName, value], for: spec)
            let joined = try ArgumentParser.parse(base + ["\(option.displayName)=\(value)"], for: spec)
            for parsed in [separate, joined] {
                #expect(parsed._typedValues(ofOptionNamed: option.name) == [value], "\(spec.name) \(option.displayName)")
            }
        }
    }

    /// Defaults are shown in help and handed to commands unchecked, so each must itself parse.
    @Test(arguments: CommandSpec.colonnadeCommands)
    func everyDefaultIsAValidValue(spec: CommandSpec) throws {
        for option in spec.options {
            guard let defaultValue = option.defaultValue else { continue }
            let base = minimalArguments(for: spec, besides: option)
            _ = try ArgumentParser.parse(base + [option.displayName, defaultValue], for: spec)
        }
    }

    @Test func shortOptionTakesItsValueSeparateAttachedOrWithEquals() throws {
        for arguments in [["-o", "out.csv"], ["-oout.csv"], ["-o=out.csv"], ["--output", "out.csv"]] {
            let parsed = try ArgumentParser.parse(["--format", "csv"] + arguments, for: .export)
            #expect(parsed[ExportCommand.Options.output] == "out.csv")
        }
    }

    @Test func repeatedSingleValuedOptionKeepsTheLastValue() throws {
        let parsed = try ArgumentParser.parse(["--limit", "5", "--limit", "7"], for: .filter)
        #expect(parsed[FilterCommand.Options.limit] == 7)
    }

    @Test func valueMayBeginWithADashUnlessItLooksLikeAnOption() throws {
        #expect(try ArgumentParser.parse(["--sort", "-date"], for: .filter)[FilterCommand.Options.sort] == ["-date"])
        #expect(try ArgumentParser.parse(["--where", "-close < -3"], for: .filter)[FilterCommand.Options.where] == "-close < -3")
        #expect(
            usageError(["--where", "--limit", "5"], for: .filter)
                == .missingValue(option: "--where", valueName: "EXPR", command: "filter"))
        #expect(
            usageError(["--format", "csv", "--output", "-o", "x"], for: .export)
                == .missingValue(option: "--output", valueName: "FILE", command: "export"))
    }

    @Test func doubleDashEndsOptions() throws {
        let parsed = try ArgumentParser.parse(["--ticker", "AAPL", "--", "--weird-name.csv", "-"], for: .importFiles)
        #expect(parsed.positionals == ["--weird-name.csv", "-"])
        #expect(parsed[ImportCommand.Options.ticker] == "AAPL")
    }

    @Test func positionalsMayMixWithOptions() throws {
        let parsed = try ArgumentParser.parse(["AAPL", "--from", "2010-01-04", "MSFT", "--update"], for: .fetch)
        #expect(parsed.positionals == ["AAPL", "MSFT"])
        #expect(parsed[FetchCommand.Options.update])
        #expect(parsed[FetchCommand.Options.database] == "WIKI")
    }

    @Test func missingValueAtTheEnd() {
        #expect(usageError(["--limit"], for: .filter) == .missingValue(option: "--limit", valueName: "N", command: "filter"))
    }

    @Test func flagGivenAValueIsRejected() {
        #expect(usageError(["--count=yes"], for: .filter) == .unexpectedValue(option: "--count", value: "yes", command: "filter"))
    }

    @Test func unknownOptionSuggestsTheNearestOption() {
        #expect(
            usageError(["--lmit", "5"], for: .filter)
                == .unknownOption("--lmit", command: "filter", suggestions: ["--limit"]))
        #expect(
            usageError(["--lmit=5"], for: .filter)
                == .unknownOption("--lmit", command: "filter", suggestions: ["--limit"]))
        #expect(
            usageError(["-limit"], for: .filter)
                == .unknownOption("-limit", command: "filter", suggestions: ["--limit"]))
        #expect(
            usageError(["--zzzzzzzz"], for: .verify)
                == .unknownOption("--zzzzzzzz", command: "verify", suggestions: []))
    }

    @Test(arguments: [
        ("--limit", "ten", "expected an integer"),
        ("--limit", "0", "must be at least 1"),
        ("--limit", "-3", "must be at least 1"),
        ("--limit", "99999999999999999999", "the number is too large"),
        ("--repeat", "0", "must be at least 1"),
        ("--threads", "1.5", "expected an integer"),
        ("--from", "2014-13-01", "there is no month 13"),
        ("--from", "2023-02-29", "February 2023 has 28 days"),
        ("--to", "2014-04-31", "April 2014 has 30 days"),
        ("--to", "2014-1-31", "expected a date YYYY-MM-DD"),
        ("--to", "31/01/2014", "expected a date YYYY-MM-DD"),
        ("--format", "xml", "expected one of table, csv, json, ndjson, arrow, arrows, parquet"),
        (
            "--by", "decade",
            "expected one of ticker, date, week, month, quarter, year, ticker,date, ticker,week, ticker,month, ticker,quarter, ticker,year, date,ticker, week,ticker, month,ticker, quarter,ticker, year,ticker"
        ),
    ])
    func badValuesAreUsageErrorsNamingOptionAndValue(option: String, value: String, reason: String) {
        guard case .invalidValue(let named, let got, let why, _, let command)? = usageError([option, value], for: .filter) else {
            Issue.record("\(option) \(value) parsed")
            return
        }
        #expect(named == option)
        #expect(got == value)
        #expect(why == reason)
        #expect(command == "filter")
    }

    @Test func leapDaysFollowTheGregorianRules() throws {
        for valid in ["2024-02-29", "2000-02-29", "1600-02-29"] {
            #expect(usageError(["--from", valid], for: .filter) == nil, "\(valid)")
        }
        for invalid in ["1900-02-29", "2100-02-29", "2023-02-29"] {
            #expect(usageError(["--from", invalid], for: .filter) != nil, "\(invalid)")
        }
    }

    @Test func misspelledChoiceGetsASuggestion() {
        guard case .invalidValue(_, _, _, let suggestion, _)? = usageError(["--format", "jsno"], for: .filter) else {
            Issue.record("parsed")
            return
        }
        #expect(suggestion == "json")
    }

    @Test func exportOnlyAcceptsStreamingFormats() {
        #expect(usageError(["--format", "table"], for: .export) != nil)
        #expect(usageError(["--format", "ndjson"], for: .export) == nil)
    }

    @Test func emptyListItemsAreRejected() {
        for value in ["A,,B", "A,", ""] {
            #expect(usageError(["--tickers", value], for: .filter) != nil, "\(value)")
        }
    }

    @Test func listSplittingKeepsParenthesesAndQuotesTogether() {
        #expect(splitList("a, b") == ["a", "b"])
        #expect(splitList("corr(open, close),max(high)") == ["corr(open, close)", "max(high)"])
        #expect(splitList("\"Adj. Close\",\"a,b\"") == ["\"Adj. Close\"", "\"a,b\""])
    }

    @Test func requiredOptionsAndArguments() {
        #expect(usageError([], for: .generate) == .missingOption(option: "--tickers N", command: "generate"))
        #expect(
            usageError(["--tickers", "3", "--csv", "q.csv"], for: .generate)
                == .missingOption(option: "--days D", command: "generate"))
        #expect(usageError(["--snapshot", "s"], for: .importFiles) == .missingArgument(name: "FILE...", command: "import"))
        // TICKER is optional for the parser (fetch --table T --bulk takes the whole table); the
        // command itself requires it without --bulk (FetchBulkTests.tickersAreRequiredWithoutBulk).
        #expect(usageError([], for: .fetch) == nil)
        #expect(usageError(["--ticker", "A"], for: .export) == .unknownOption("--ticker", command: "export", suggestions: ["--tickers"]))
        #expect(usageError([], for: .export) == .missingOption(option: "--format csv|ndjson|arrow|arrows|parquet|delta", command: "export"))
    }

    @Test func generateNeedsExactlyOneDestination() {
        let base = ["--tickers", "3", "--days", "10"]
        #expect(
            usageError(base, for: .generate)
                == .missingOneOf(["--snapshot PATH", "--json-dir DIR", "--csv FILE"], command: "generate"))
        #expect(
            usageError(base + ["--csv", "a.csv", "--json-dir", "d"], for: .generate)
                == .conflictingOptions(["--json-dir", "--csv"], command: "generate"))
        #expect(usageError(base + ["--json-dir", "d"], for: .generate) == nil)
    }

    @Test func mutuallyExclusiveOptionsConflictOnlyWhenTyped() {
        #expect(usageError(["AAPL", "--table", "WIKI/PRICES"], for: .fetch) == nil)  // --database has a default
        #expect(
            usageError(["AAPL", "--database", "WIKI", "--table", "WIKI/PRICES"], for: .fetch)
                == .conflictingOptions(["--database", "--table"], command: "fetch"))
        #expect(
            usageError(["AAPL", "--debug", "--quiet"], for: .fetch)
                == .conflictingOptions(["--debug", "--quiet"], command: "fetch"))
        #expect(
            usageError(["--count", "--agg", "avg(close)"], for: .filter)
                == .conflictingOptions(["--count", "--agg"], command: "filter"))
    }

    @Test func byNeedsAnAggregate() {
        #expect(
            usageError(["--by", "ticker"], for: .filter)
                == .missingCompanion(option: "--by", anyOf: ["--count", "--agg"], command: "filter"))
        #expect(usageError(["--by", "ticker", "--count"], for: .filter) == nil)
    }

    @Test func fromAfterToIsRejected() {
        #expect(
            usageError(["--from", "2014-01-01", "--to", "2005-01-01"], for: .filter)
                == .reversedRange(first: "--from", firstValue: "2014-01-01", second: "--to", secondValue: "2005-01-01", command: "filter"))
        #expect(usageError(["--from", "2014-01-01", "--to", "2014-01-01"], for: .filter) == nil)
    }

    @Test func strayPositionalSuggestsTheOptionItNames() {
        #expect(usageError(["limit", "5"], for: .filter) == .unexpectedArgument("limit", command: "filter", suggestion: "--limit"))
        #expect(usageError(["snapshots/x"], for: .verify) == .unexpectedArgument("snapshots/x", command: "verify", suggestion: nil))
    }

    // MARK: Helpers

    /// The arguments `spec` needs to parse at all, leaving `option` for the caller to add.
    private func minimalArguments(for spec: CommandSpec, besides option: OptionSpec) -> [String] {
        var arguments = spec.positionals.filter(\.isRequired).map { _ in "X" }
        for required in spec.options where required.isRequired && required.name != option.name {
            arguments += [required.displayName, sampleValue(for: required)]
        }
        for constraint in spec.constraints {
            if case .exactlyOne(let names) = constraint, !names.contains(option.name) {
                let first = spec.option(named: names[0])!
                arguments += [first.displayName, sampleValue(for: first)]
            }
        }
        // Companions, transitively (fetch: --keep-zip needs --bulk, which needs --table).
        var needing = [option.name]
        var added: Set<String> = [option.name]
        while let name = needing.popLast() {
            for constraint in spec.constraints {
                guard case .requires(name, let others) = constraint, !others.contains(where: added.contains) else { continue }
                let companion = spec.option(named: others[0])!
                arguments += companion.isFlag ? [companion.displayName] : [companion.displayName, sampleValue(for: companion)]
                added.insert(companion.name)
                needing.append(companion.name)
            }
        }
        return arguments
    }

    private func sampleValue(for option: OptionSpec) -> String {
        switch option.kind {
        case .string: "value"
        case .integer(let minimum): String(minimum + 1)
        case .date: "2014-06-30"
        case .choice(let allowed): allowed[allowed.count - 1]
        }
    }
    /// Found by the Completion fuzz target: a value after `=` that starts with a combining mark
    /// fused with the `=` into one Character, so `--word=\u{33C}n` was an unknown option.
    @Test func aValueAfterEqualsMayStartWithACombiningMark() throws {
        let filter = try ArgumentParser.parse(["--where=\u{301}close > 1", "--tickers=\u{33C}n,A"], for: .filter)
        #expect(filter[FilterCommand.Options.where] == "\u{301}close > 1")
        #expect(filter[FilterCommand.Options.tickers] == ["\u{33C}n", "A"])
        let export = try ArgumentParser.parse(["--format", "csv", "-o=\u{301}x.csv"], for: .export)
        #expect(export[ExportCommand.Options.output] == "\u{301}x.csv")
        let attached = try ArgumentParser.parse(["--format", "csv", "-o\u{301}x.csv"], for: .export)
        #expect(attached[ExportCommand.Options.output] == "\u{301}x.csv")
    }
}
