/// The body format of a time-series request (`data.json` or `data.csv`).
///
/// (Named for what it is, not `DataLinkFormat`: that is the module of response shapes, and a
/// type sharing a module's name makes `DataLinkFormat.X` ambiguous for code importing both.)
public enum ResponseFormat: String, Sendable, Hashable {
    case json
    case csv

    /// The `Accept` header value sent for this format.
    public var acceptHeader: String {
        switch self {
        case .json: "application/json"
        case .csv: "text/csv"
        }
    }
}
