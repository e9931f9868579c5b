import Foundation

/// What a Colonnade table carries beyond its columns, stored in an Arrow schema's or a Parquet
/// file's key-value metadata under the key `colonnade` so that our own files round-trip exactly:
/// the value columns' source names (`Adj. Close`; the fields are named by identifier), the date
/// column's name, and the ticker dictionary in code order with each ticker's metadata.
///
/// Other tools ignore the key; readers of files without it derive everything from the columns.
struct InteropTableInfo: Equatable {
    static let key = "colonnade"

    var dateColumnName: String
    var columnNames: [String]
    var tickers: [TickerEntry]

    init(table: QuoteTable) {
        dateColumnName = table.dateColumnName
        columnNames = table.schema.map(\.name)
        tickers = table.tickers.map { TickerEntry(symbol: $0.symbol, metadata: $0.metadata) }
    }

    init(dateColumnName: String, columnNames: [String], tickers: [TickerEntry]) {
        self.dateColumnName = dateColumnName
        self.columnNames = columnNames
        self.tickers = tickers
    }

    /// The JSON text: `{"date_column": …, "columns": [...], "tickers": [[symbol, {metadata}], ...]}`.
    func encoded() -> String {
        let object: [String: Any] = [
            "version": 1,
            "date_column": dateColumnName,
            "columns": columnNames,
            "tickers": tickers.map { [$0.symbol, $0.metadata] as [Any] },
        ]
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    /// The information in `text`, or nil when it is not what `encoded()` writes.
    init?(decoding text: String) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
            let date = object["date_column"] as? String,
            let columns = object["columns"] as? [String],
            let tickerList = object["tickers"] as? [Any]
        else { return nil }
        var tickers: [TickerEntry] = []
        tickers.reserveCapacity(tickerList.count)
        for item in tickerList {
            guard let pair = item as? [Any], pair.count == 2, let symbol = pair[0] as? String,
                let metadata = pair[1] as? [String: String]
            else { return nil }
            tickers.append(TickerEntry(symbol: symbol, metadata: metadata))
        }
        self.init(dateColumnName: date, columnNames: columns, tickers: tickers)
    }
}
