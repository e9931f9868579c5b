import Synchronization

/// A column's values computed on first use, once, and shared by every copy of the column: how a
/// store's version with segments defers merging each value column until something reads it
/// (`QuoteTable.upsert(contentsOf:threads:deferringColumns:)`; ARCHITECTURE.md, *Versions and
/// appends*). A query that reads two of twelve columns merges two.
@usableFromInline
final class PendingColumn<Element: ColumnElement>: @unchecked Sendable {
    // Safe to share across threads: `resolved` is written once, under `lock`, before `ready` is
    // stored (releasing); it is read only after `ready` is loaded true (acquiring) or under the lock.
    private let make: @Sendable () -> Column<Element>
    private let lock = Mutex<Void>(())
    private let ready = Atomic<Bool>(false)
    private var resolved: Column<Element>?
    /// Where the values lie unmerged, when they can be read there (`ColumnStitch`).
    let stitch: ColumnStitch<Element>?

    /// `make` returns the column, with no pending values of its own; it runs at most once.
    init(stitch: ColumnStitch<Element>? = nil, _ make: @escaping @Sendable () -> Column<Element>) {
        self.stitch = stitch
        self.make = make
    }

    /// The column, computed by the first caller (others wait for it).
    @usableFromInline var column: Column<Element> {
        if ready.load(ordering: .acquiring) { return resolved.unsafelyUnwrapped }
        return lock.withLock { _ in
            if let resolved { return resolved }
            let c = make()
            precondition(c.pending == nil, "a pending column resolved to a pending column")
            resolved = c
            ready.store(true, ordering: .releasing)
            return c
        }
    }

    /// Whether the values have been computed (for tests).
    var isResolved: Bool { ready.load(ordering: .acquiring) }
}
