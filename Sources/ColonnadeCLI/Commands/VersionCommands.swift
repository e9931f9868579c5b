import Colonnade
import Foundation

/// `colonnade log`: the store's versions, oldest first (docs/SNAPSHOT_FORMAT.md, *Stores*).
struct LogCommand: Command {
    var spec: CommandSpec { .log }

    func run(_ parsed: ParsedArguments, context: CommandContext) throws -> Int32 {
        let source = try SnapshotLocation.forReading(parsed[VersionOptions.snapshot], context: context)
        guard let path = source.path else {
            throw CommandFailure("the built-in sample has no versions", hint: "pass --snapshot PATH")
        }
        let log = try SnapshotStore(at: path).log()
        switch parsed[Options.format] {
        case .json:
            let versions = log.versions.map { v -> [String: Any] in
                var o: [String: Any] = [
                    "version": v.number, "kind": v.kind.name, "time_utc": Self.utc(v.millisecondsSince1970),
                    "time_local": Self.local(v.millisecondsSince1970), "command": v.command, "rows": v.rowCount,
                    "written_rows": v.writtenRows, "written_bytes": v.writtenBytes, "files": v.files.count,
                    "bytes": log.bytes(of: v),
                ]
                if let r = v.restoredFrom { o["restored_from"] = r }
                return o
            }
            let object: [String: Any] = [
                "path": path, "current": log.current.number, "versions": versions,
                "data_bytes": log.totalBytes, "single_file": log.isSingleFile,
            ]
            let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes])
            try context.standardOutput.writeLine(TerminalText.escapedJSON(String(decoding: data, as: UTF8.self)))
        case .table:
            for v in log.versions.reversed() {
                let what = v.kind == .restore ? "restore of version \(v.restoredFrom ?? 0)" : v.kind.name
                var line =
                    "version \(v.number)\(v.number == log.current.number ? " (current)" : "")  \(what)  "
                    + "\(Self.local(v.millisecondsSince1970)) (\(Self.utc(v.millisecondsSince1970)))  "
                    + "\(v.rowCount.groupedText) rows, wrote \(v.writtenRows.groupedText) rows in \(Self.bytes(v.writtenBytes))"
                if v.files.count > 1 { line += ", \(v.files.count) files" }
                try context.standardOutput.writeLine(TerminalText.escaped(line))
                if !v.command.isEmpty { try context.standardOutput.writeLine(TerminalText.escaped("    \(v.command)")) }
            }
        }
        return ExitStatus.success
    }

    /// `2026-11-28 15:04 UTC`.
    static func utc(_ ms: Int64) -> String { format(ms, zone: TimeZone(identifier: "UTC") ?? .current, suffix: " UTC") }

    /// `2026-11-28 16:04+01:00` in the local time zone.
    static func local(_ ms: Int64) -> String {
        let zone = TimeZone.current
        let offset = zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(ms) / 1000)) / 60
        let sign = offset < 0 ? "-" : "+"
        return format(ms, zone: zone, suffix: String(format: "%@%02d:%02d", sign, abs(offset) / 60, abs(offset) % 60))
    }

    static func format(_ ms: Int64, zone: TimeZone, suffix: String) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let c = calendar.dateComponents(
            [.year, .month, .day, .hour, .minute, .second], from: Date(timeIntervalSince1970: Double(ms) / 1000))
        return String(
            format: "%04d-%02d-%02d %02d:%02d:%02d", c.year ?? 0, c.month ?? 0, c.day ?? 0, c.hour ?? 0, c.minute ?? 0, c.second ?? 0)
            + suffix
    }

    static func bytes(_ n: Int) -> String {
        n >= 10_000_000
            ? String(format: "%.0f MB", Double(n) / 1e6) : n >= 10_000 ? String(format: "%.0f kB", Double(n) / 1e3) : "\(n) bytes"
    }

    /// Parses `YYYY-MM-DD HH:MM` (local time), optionally `±HH:MM` or `Z` after it: milliseconds
    /// since 1970 UTC at the end of that minute (a version committed during it counts), or nil.
    static func parseTime(_ text: String) -> Int64? {
        let t = text.trimmingCharacters(in: .whitespaces)
        let u = Array(t.utf8)
        guard u.count >= 16, u[4] == UInt8(ascii: "-"), u[7] == UInt8(ascii: "-"), u[10] == UInt8(ascii: " ") || u[10] == UInt8(ascii: "T"),
            u[13] == UInt8(ascii: ":")
        else { return nil }
        func number(_ r: Range<Int>) -> Int? {
            var n = 0
            for i in r {
                guard u[i] >= 48, u[i] <= 57 else { return nil }
                n = n * 10 + Int(u[i] - 48)
            }
            return n
        }
        guard let y = number(0 ..< 4), let mo = number(5 ..< 7), let d = number(8 ..< 10), let h = number(11 ..< 13),
            let mi = number(14 ..< 16),
            (1 ... 12).contains(mo), (1 ... 31).contains(d), h < 24, mi < 60
        else { return nil }
        var zone = TimeZone.current
        let rest = Array(u[16...])
        if rest == [UInt8(ascii: "Z")] {
            zone = TimeZone(secondsFromGMT: 0) ?? zone
        } else if rest.count == 6, rest[0] == UInt8(ascii: "+") || rest[0] == UInt8(ascii: "-"), rest[3] == UInt8(ascii: ":") {
            guard let oh = number(17 ..< 19), let om = number(20 ..< 22), oh < 24, om < 60,
                let z = TimeZone(secondsFromGMT: (rest[0] == UInt8(ascii: "-") ? -1 : 1) * (oh * 3600 + om * 60))
            else { return nil }
            zone = z
        } else if !rest.isEmpty {
            return nil
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        guard let date = calendar.date(from: DateComponents(year: y, month: mo, day: d, hour: h, minute: mi)),
            calendar.component(.day, from: date) == d
        else { return nil }
        return Int64((date.timeIntervalSince1970 * 1000).rounded()) + 59_999
    }
}

/// `colonnade restore N`: version N's files become the current version, as a new version.
struct RestoreCommand: Command {
    var spec: CommandSpec { .restore }

    func run(_ parsed: ParsedArguments, context: CommandContext) throws -> Int32 {
        guard let text = parsed.positionals.first, let number = Int(text), number >= 1 else {
            throw UsageError.invalidValue(
                option: "N", value: parsed.positionals.first ?? "", reason: "a version number (1 or more)",
                suggestion: nil, command: spec.name)
        }
        let path = try SnapshotLocation.forWriting(parsed[VersionOptions.writeSnapshot], context: context)
        let lock = try SnapshotLocation.lock(path, wait: !parsed[SharedOptions.noWait], context: context)
        defer { lock.release() }
        let commit = try SnapshotStore(at: path).restoreLocked(number, command: context.commandText, durable: true)
        context.note(
            "restored version \(number) as version \(commit.version.number) (\(commit.version.rowCount.groupedText) rows); "
                + "'colonnade restore \(commit.version.number - 1)' undoes it")
        return ExitStatus.success
    }
}

/// `colonnade compact`: the current version's files folded into one, as a new version.
struct CompactCommand: Command {
    var spec: CommandSpec { .compact }

    func run(_ parsed: ParsedArguments, context: CommandContext) throws -> Int32 {
        let path = try SnapshotLocation.forWriting(parsed[VersionOptions.writeSnapshot], context: context)
        let lock = try SnapshotLocation.lock(path, wait: !parsed[SharedOptions.noWait], context: context)
        defer { lock.release() }
        let started = DispatchTime.now().uptimeNanoseconds
        guard
            let commit = try SnapshotStore(at: path).compactLocked(
                command: context.commandText, durable: true, threads: QueryOptions.availableCores)
        else {
            context.note("\(path) is one file already; nothing to compact")
            return ExitStatus.success
        }
        let ms = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6
        context.note(
            "compacted into version \(commit.version.number): \(commit.version.rowCount.groupedText) rows, "
                + "\(LogCommand.bytes(commit.writtenBytes)) written in \(String(format: "%.0f", ms)) ms")
        return ExitStatus.success
    }
}

/// `colonnade gc --keep N | --keep-days D`: old versions and the files only they need removed.
struct GCCommand: Command {
    var spec: CommandSpec { .gc }

    func run(_ parsed: ParsedArguments, context: CommandContext) throws -> Int32 {
        let keep = parsed[Options.keep], days = parsed[Options.keepDays]
        guard keep != nil || days != nil else {
            throw CommandFailure("gc needs --keep N or --keep-days D (or both)", hint: "'colonnade log' lists the versions")
        }
        let path = try SnapshotLocation.forWriting(parsed[VersionOptions.writeSnapshot], context: context)
        let lock = try SnapshotLocation.lock(path, wait: !parsed[SharedOptions.noWait], context: context)
        defer { lock.release() }
        let result = try SnapshotStore(at: path).collectGarbageLocked(keepLast: keep, keepDays: days, durable: true)
        let list =
            result.removedVersions.isEmpty
            ? "no version"
            : "\(result.removedVersions.count) version\(result.removedVersions.count == 1 ? "" : "s") (\(result.removedVersions.map(String.init).joined(separator: ", ")))"
        context.note(
            "removed \(list); \(result.removedFiles) file\(result.removedFiles == 1 ? "" : "s"), \(LogCommand.bytes(result.freedBytes)) freed"
        )
        return ExitStatus.success
    }
}

extension CommandContext {
    /// The command line as a version records it, credentials redacted (`SnapshotStore.commandText`).
    var commandText: String { SnapshotStore.commandText(["colonnade"] + arguments) }
}

extension SnapshotLocation {
    /// `forReading` with the command's `--at-version` / `--at-time`, when it declares them.
    static func forReading(_ parsed: ParsedArguments, _ snapshot: OptionKey<String?>, context: CommandContext) throws -> SnapshotSource {
        let source = try forReading(parsed[snapshot], context: context)
        var version: Int?
        if parsed.declares(VersionOptions.atVersion) { version = parsed[VersionOptions.atVersion] }
        if parsed.declares(VersionOptions.atTime), let text = parsed[VersionOptions.atTime] {
            guard version == nil else {
                throw UsageError.invalidValue(
                    option: "--at-time", value: text, reason: "give --at-version or --at-time, not both",
                    suggestion: nil, command: parsed.spec.name)
            }
            guard let ms = LogCommand.parseTime(text) else {
                throw UsageError.invalidValue(
                    option: "--at-time", value: text, reason: "expected 'YYYY-MM-DD HH:MM', optionally with ±HH:MM or Z",
                    suggestion: nil, command: parsed.spec.name)
            }
            guard let path = source.path else { throw CommandFailure("the built-in sample has no versions", hint: "pass --snapshot PATH") }
            version = try SnapshotStore(at: path).version(atOrBefore: ms).number
        }
        guard let version else { return source }
        guard let path = source.path else { throw CommandFailure("the built-in sample has no versions", hint: "pass --snapshot PATH") }
        return .version(path, version)
    }
}
