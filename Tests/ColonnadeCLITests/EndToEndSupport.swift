import Colonnade
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

// Shared pieces of the end-to-end tests (EndToEnd*Tests.swift): one small generated snapshot
// written once per test run, a way to run the built `colonnade` in a clean environment, and
// parsers that turn its CSV, JSON, NDJSON and table output back into values to compare with the
// engine's own answer.

/// A generated snapshot (12 tickers × 300 days), written once into a temporary directory, and
/// the engine's table loaded back from that file.
final class EndToEndFixture: Sendable {
    static let tickers = 12, days = 300, seed: UInt64 = 20_140_512

    /// The temporary directory every end-to-end test works in; removed when the test process
    /// exits.
    static let root: URL = {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("colonnade-e2e-\(getpid())-\(UUID().uuidString.prefix(8))", isDirectory: true)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(at: EndToEndFixture.root) }
        return url
    }()

    private static let shared = Result { try EndToEndFixture() }

    /// The fixture, created on first use.
    static func get() throws -> EndToEndFixture { try shared.get() }

    /// The snapshot's path.
    let snapshot: String
    /// The snapshot as the engine loads it.
    let table: QuoteTable

    private init() throws {
        let directory = try Self.scratchDirectory("fixture")
        snapshot = directory.appendingPathComponent("quotes.snapshot").path
        try QuoteGenerator(tickers: Self.tickers, days: Self.days, seed: Self.seed).makeTable().save(to: snapshot)
        table = try QuoteTable.load(from: snapshot)
    }

    /// A new, empty directory under ``root``.
    static func scratchDirectory(_ label: String = "scratch") throws -> URL {
        let url = root.appendingPathComponent("\(label)-\(UUID().uuidString.prefix(8))", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// The test process's environment without `$COLONNADE_SNAPSHOT`, and with `$XDG_DATA_HOME`
    /// an empty directory of the test run's, so that a developer's setting or snapshot in
    /// `~/.local/share/colonnade` cannot change what the tests read.
    static let cleanEnvironment: [String: String] = {
        var environment = ProcessInfo.processInfo.environment
        environment["COLONNADE_SNAPSHOT"] = nil
        environment["XDG_DATA_HOME"] = root.appendingPathComponent("data-home").path
        return environment
    }()

    /// The repository's bundled sample (this file is `<repo>/Tests/ColonnadeCLITests/…`).
    static let bundledSample: String = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("snapshots/sample.snapshot").path

    /// Runs `colonnade command --snapshot <fixture> rest…`.
    func run(_ command: String, _ rest: String...) throws -> BuiltExecutable.Result {
        try run([command, "--snapshot", snapshot] + rest)
    }

    /// Runs `colonnade arguments` (given exactly) in ``root`` with ``cleanEnvironment``.
    func run(_ arguments: [String]) throws -> BuiltExecutable.Result {
        try runBuiltColonnade(arguments)
    }

    /// Every column name `filter --columns all` prints, in order.
    var allColumns: [String] { ["ticker", "date"] + table.schema.map(\.identifier) }

    /// The engine's rows: the named columns of the given row numbers.
    func expectedRows(_ rows: some Sequence<Int>, columns: [String]) -> [[Value]] {
        rows.map { r in
            columns.map { name in
                switch name {
                case "ticker": .text(table.tickers[Int(table.tickerNumber(ofRow: r))].symbol)
                case "date": .text(Day(daysSinceEpoch: table.dates[r]).description)
                default: table.column(named: name)?.doubleValue(at: r).map { .number($0) } ?? .null
                }
            }
        }
    }
}

/// Runs the built `colonnade` with `arguments`, by default in ``EndToEndFixture/root`` with
/// ``EndToEndFixture/cleanEnvironment``.
func runBuiltColonnade(
    _ arguments: [String], environment: [String: String] = EndToEndFixture.cleanEnvironment,
    in directory: URL = EndToEndFixture.root
) throws -> BuiltExecutable.Result {
    try BuiltExecutable.run(arguments, environment: environment, currentDirectory: directory)
}

/// One value read back from the tool's output, compared exactly (numbers by bit pattern).
enum Value: Hashable, CustomStringConvertible {
    case text(String)
    case number(UInt64)
    case null

    static func number(_ x: Double) -> Value { .number(x.bitPattern) }

    var description: String {
        switch self {
        case .text(let s): "\"\(s)\""
        case .number(let bits): "\(Double(bitPattern: bits))"
        case .null: "null"
        }
    }

    /// A cell of column `column` as text: `ticker` and `date` stay text, anything else must
    /// read back as a `Double` (an empty field is null).
    static func parsing(_ field: String, column: String) -> Value {
        if column == "ticker" || column == "date" { return .text(field) }
        if field.isEmpty { return .null }
        guard let x = Double(field) else { return .text(field) }  // mismatches, and shows the text
        return .number(x)
    }
}

/// A result read back from the tool: a header and rows.
struct ParsedResult: Equatable {
    var columns: [String]
    var rows: [[Value]]
}

enum OutputParser {
    struct Malformed: Error, CustomStringConvertible {
        var description: String
    }

    /// Splits text into lines, requiring it to end with a line feed.
    static func lines(_ text: String) throws -> [String] {
        guard text.hasSuffix("\n") else { throw Malformed(description: "output does not end with a line feed: \(text.suffix(80))") }
        return text.dropLast().split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    /// RFC 4180 fields of one line (quoted fields may hold commas and doubled quotes).
    static func csvFields(_ line: String) -> [String] {
        var fields = [String](), field = "", quoted = false
        var characters = line.makeIterator()
        while let c = characters.next() {
            if quoted {
                if c == "\"" {
                    // A doubled quote is a quote; a single one ends the quoted part.
                    var lookahead = characters
                    if lookahead.next() == "\"" {
                        field.append("\"")
                        characters = lookahead
                    } else {
                        quoted = false
                    }
                } else {
                    field.append(c)
                }
            } else if c == "\"" {
                quoted = true
            } else if c == "," {
                fields.append(field)
                field = ""
            } else {
                field.append(c)
            }
        }
        fields.append(field)
        return fields
    }

    static func csv(_ text: String) throws -> ParsedResult {
        let lines = try lines(text)
        guard let header = lines.first else { throw Malformed(description: "no header line") }
        let columns = csvFields(header)
        let rows = try lines.dropFirst().map { line in
            let fields = csvFields(line)
            guard fields.count == columns.count else {
                throw Malformed(description: "\(fields.count) fields, expected \(columns.count): \(line)")
            }
            return zip(fields, columns).map { Value.parsing($0, column: $1) }
        }
        return ParsedResult(columns: columns, rows: rows)
    }

    /// One JSON object per line; the keys must be `columns`, in that order.
    static func ndjson(_ text: String, columns: [String]) throws -> ParsedResult {
        let rows = try lines(text).map { line in try object(line, columns: columns) }
        return ParsedResult(columns: columns, rows: rows)
    }

    /// A JSON array of objects, one per line between `[` and `]`; the keys must be `columns`, in
    /// that order.
    static func jsonArray(_ text: String, columns: [String]) throws -> ParsedResult {
        guard let array = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [Any] else {
            throw Malformed(description: "not a JSON array")
        }
        // Key order is checked on the text: each object is on its own line.
        let objectLines = try lines(text).filter { $0.hasPrefix("{") }
        guard objectLines.count == array.count else { throw Malformed(description: "\(array.count) objects on \(objectLines.count) lines") }
        let rows = try objectLines.map { line in
            try object(line.hasSuffix(",") ? String(line.dropLast()) : line, columns: columns)
        }
        return ParsedResult(columns: columns, rows: rows)
    }

    private static func object(_ line: String, columns: [String]) throws -> [Value] {
        // JSONSerialization checks the syntax; the values come from `flatObject`, because on
        // Linux it returns NSDecimalNumber for long mantissas, whose doubleValue can be an ulp off.
        guard try JSONSerialization.jsonObject(with: Data(line.utf8)) is [String: Any] else {
            throw Malformed(description: "not a JSON object: \(line)")
        }
        let pairs = try flatObject(line)
        guard pairs.map(\.key) == columns else {
            throw Malformed(description: "keys \(pairs.map(\.key)), expected \(columns) in that order")
        }
        return pairs.map(\.value)
    }

    /// The members of a JSON object whose values are all strings, numbers or null, in order;
    /// numbers read with `Double(_:)` from their text, so exactly.
    static func flatObject(_ text: String) throws -> [(key: String, value: Value)] {
        var scalars = Array(text.unicodeScalars)[...]
        func fail(_ what: String) -> Malformed {
            Malformed(description: "\(what) at …\(String(String.UnicodeScalarView(scalars.prefix(30)))) in \(text)")
        }
        func skipSpaces() { while let c = scalars.first, c == " " || c == "\t" { scalars.removeFirst() } }
        func expect(_ c: Unicode.Scalar) throws {
            skipSpaces()
            guard scalars.first == c else { throw fail("expected '\(c)'") }
            scalars.removeFirst()
        }
        func string() throws -> String {
            try expect("\"")
            var out = String.UnicodeScalarView()
            while let c = scalars.popFirst() {
                switch c {
                case "\"": return String(out)
                case "\\":
                    guard let e = scalars.popFirst() else { throw fail("unterminated escape") }
                    switch e {
                    case "n": out.append("\n")
                    case "t": out.append("\t")
                    case "r": out.append("\r")
                    case "b": out.append("\u{08}")
                    case "f": out.append("\u{0C}")
                    case "u":
                        let hex = String(String.UnicodeScalarView(scalars.prefix(4)))
                        scalars.removeFirst(min(4, scalars.count))
                        guard let v = UInt32(hex, radix: 16), let u = Unicode.Scalar(v) else { throw fail("bad \\u escape") }
                        out.append(u)
                    default: out.append(e)
                    }
                default: out.append(c)
                }
            }
            throw fail("unterminated string")
        }
        var members = [(key: String, value: Value)]()
        try expect("{")
        skipSpaces()
        if scalars.first == "}" {
            scalars.removeFirst()
            return members
        }
        while true {
            let key = try string()
            try expect(":")
            skipSpaces()
            let value: Value
            if scalars.first == "\"" {
                value = .text(try string())
            } else {
                var token = ""
                while let c = scalars.first, c != ",", c != "}", c != " " {
                    token.unicodeScalars.append(c)
                    scalars.removeFirst()
                }
                if token == "null" {
                    value = .null
                } else if let x = Double(token) {
                    value = .number(x)
                } else {
                    throw fail("unexpected value '\(token)'")
                }
            }
            members.append((key, value))
            skipSpaces()
            guard let c = scalars.popFirst() else { throw fail("unterminated object") }
            if c == "}" { break }
            guard c == "," else { throw fail("expected ',' or '}'") }
        }
        skipSpaces()
        guard scalars.isEmpty else { throw fail("text after the object") }
        return members
    }

    /// The table format: header, dashes, rows, and the footer line (returned apart) if there is one.
    static func table(_ text: String, hasFooter: Bool = true) throws -> (result: ParsedResult, footer: String) {
        var lines = try lines(text)
        guard lines.count >= (hasFooter ? 3 : 2) else { throw Malformed(description: "too few lines for a table: \(text)") }
        let footer = hasFooter ? lines.removeLast() : ""
        let columns = lines[0].split(separator: " ").map(String.init)
        let dashes = lines[1].split(separator: " ")
        guard dashes.count == columns.count, dashes.allSatisfy({ $0.allSatisfy { $0 == "-" } }) else {
            throw Malformed(description: "second line is not dashes under each column: \(lines[1])")
        }
        let rows = try lines.dropFirst(2).map { line in
            let fields = line.split(separator: " ").map(String.init)
            guard fields.count == columns.count else {
                throw Malformed(description: "\(fields.count) fields, expected \(columns.count): \(line)")
            }
            return zip(fields, columns).map { Value.parsing($0, column: $1) }
        }
        return (ParsedResult(columns: columns, rows: rows), footer)
    }

    /// A JSON object on one line.
    static func jsonObject(_ line: String) throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            throw Malformed(description: "not a JSON object: \(line)")
        }
        return object
    }
}

/// `2000-03-01` as days since 1970-01-01.
func day(_ text: String) -> Int32 {
    guard let d = Day(text)?.daysSinceEpoch else { preconditionFailure("bad date \(text)") }
    return d
}

/// A copy of `source` at a new path in a scratch directory.
func copyOfFile(_ source: String, named name: String = "copy.snapshot") throws -> String {
    let target = try EndToEndFixture.scratchDirectory("copy").appendingPathComponent(name).path
    try FileManager.default.copyItem(atPath: source, toPath: target)
    return target
}

/// Rounds `n` up to a multiple of 64 (payload alignment in snapshot files).
func align64(_ n: Int) -> Int { (n + 63) / 64 * 64 }
