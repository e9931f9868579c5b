// The store's version commands (log, restore, compact, gc) and the reading commands'
// --at-version and --at-time (docs/SNAPSHOT_FORMAT.md, *Stores: versions and appends*).

import Colonnade

extension CommandSpec {
    /// `colonnade log`: the store's versions.
    static let log = CommandSpec(
        name: "log",
        abstract: "List the snapshot's versions: number, time (local and UTC), what made it, rows and bytes written.",
        discussion: "Every committed write is a version; every earlier version stays readable (--at-version N, --at-time) "
            + "until 'colonnade gc' removes it. A single-file snapshot (format 1.x) is one version until its first write.",
        options: [VersionOptions.snapshot.spec, LogCommand.Options.format.spec],
        examples: ["log", "log --snapshot snapshots/quotes.snapshot --format json"]
    )

    /// `colonnade restore N`.
    static let restore = CommandSpec(
        name: "restore",
        abstract: "Make an earlier version current again, as a new version (nothing is lost: later versions stay in the log).",
        positionals: [PositionalSpec("N", abstract: "The version to restore ('colonnade log' lists them).")],
        options: [VersionOptions.writeSnapshot.spec, SharedOptions.noWait.spec],
        examples: ["restore 3"]
    )

    /// `colonnade compact`.
    static let compact = CommandSpec(
        name: "compact",
        abstract: "Fold the current version's base and appended segments into one file, as a new version.",
        discussion: "Imports compact on their own, after their commit, once a version has more than "
            + "\(SnapshotStore.compactionSegmentLimit) segments or its segments hold more rows than its base.",
        options: [VersionOptions.writeSnapshot.spec, SharedOptions.noWait.spec],
        examples: ["compact"]
    )

    /// `colonnade gc`.
    static let gc = CommandSpec(
        name: "gc",
        abstract: "Remove old versions and the data files only they need; the only command that deletes versions.",
        discussion: "The current version is always kept. With both options, a version either keeps is kept.",
        options: [
            GCCommand.Options.keep.spec, GCCommand.Options.keepDays.spec, VersionOptions.writeSnapshot.spec, SharedOptions.noWait.spec,
        ],
        constraints: [],
        examples: ["gc --keep 10", "gc --keep-days 30"]
    )
}

/// Options the version commands and the reading commands share.
enum VersionOptions {
    static let snapshot = SharedOptions.readSnapshot("Snapshot (store) to read.")
    static let writeSnapshot = SharedOptions.writeSnapshot("Snapshot (store) to change.")
    /// `--at-version N` of a reading command.
    static let atVersion = OptionKey.integer(
        "at-version", value: "N", minimum: 1,
        abstract: "Read version N of the snapshot ('colonnade log' lists them), not the current one.")
    /// `--at-time TIME` of a reading command.
    static let atTime = OptionKey.string(
        "at-time", value: "TIME",
        abstract: "Read the version current at TIME, 'YYYY-MM-DD HH:MM' in local time, or with an offset "
            + "('2026-11-20 17:00+01:00', '… Z').")
}

extension LogCommand {
    enum Options {
        static let format = OptionKey.choice("format", default: Format.table, abstract: "Output format.")

        /// `--format`.
        enum Format: String, CaseIterable, Sendable {
            case table, json
        }
    }
}

extension GCCommand {
    enum Options {
        static let keep = OptionKey.integer("keep", value: "N", minimum: 1, abstract: "Keep the newest N versions.")
        static let keepDays = OptionKey.integer(
            "keep-days", value: "D", minimum: 0, abstract: "Keep the versions committed in the last D days.")
    }
}
