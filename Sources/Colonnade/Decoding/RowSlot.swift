/// What one position of a row holds, as the scanners' row loops take it: a value column index
/// (≥ 0, into `RowBuffers.values`), or one of these.
package enum RowSlot {
    /// The row's date (`YYYY-MM-DD`).
    package static let date: Int32 = -1
    /// The row's ticker (datatables).
    package static let ticker: Int32 = -2
    /// A value to skip (JSON only; it must still be well-formed).
    package static let skip: Int32 = -3
}
