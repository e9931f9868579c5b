/// Optional parameters of a time-series (`datasets/…/data`) request.
///
/// ```swift
/// DatasetOptions(columnIndex: 4, collapse: .monthly)   // month-end closes
/// ```
public struct DatasetOptions: Sendable, Hashable {
    /// `order`: the client asks for oldest first by default (the API's own default is newest first).
    public enum Order: String, Sendable, Hashable { case ascending = "asc", descending = "desc" }
    /// `collapse`: resample to the last observation of each period.
    public enum Collapse: String, Sendable, Hashable, CaseIterable {
        case none, daily, weekly, monthly, quarterly, annual
    }
    /// `transform`: computed by the server before download.
    public enum Transform: String, Sendable, Hashable, CaseIterable {
        case none, diff, rdiff, rdiffFrom = "rdiff_from", cumul, normalize
    }

    /// Row order; ascending by default (the API default is descending).
    public var order: Order
    /// `column_index`: only this column (0 = date, which is always returned; data starts at 1).
    public var columnIndex: Int?
    /// Server-side resampling (`collapse=`), none by default.
    public var collapse: Collapse?
    /// Server-side transformation (`transform=`), none by default.
    public var transform: Transform?
    /// `limit`: the first *n* rows in the requested order.
    public var limit: Int?

    /// Options; every one optional.
    public init(
        order: Order = .ascending, columnIndex: Int? = nil, collapse: Collapse? = nil, transform: Transform? = nil, limit: Int? = nil
    ) {
        self.order = order
        self.columnIndex = columnIndex
        self.collapse = collapse
        self.transform = transform
        self.limit = limit
    }
}
