import Foundation
import Colonnade
import DataLinkFormat

/// A seed-tutorial row: 13 fields, dates through DateFormatter, numbers through NSNumber.
struct SeedRow {
    var date: Date
    var open, high, low, close, volume, exDividend, splitRatio: Float
    var adjOpen, adjHigh, adjLow, adjClose, adjVolume: Float
}

/// `JSONDecoder` baseline shapes.
struct CodableDatasetData: Decodable {
    struct Body: Decodable {
        var column_names: [String]
        var data: [[CodableCell]]
    }
    var dataset_data: Body
}

enum CodableCell: Decodable {
    case number(Double), text(String), null
    init(from decoder: Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() {
            self = .null
        } else if let d = try? c.decode(Double.self) {
            self = .number(d)
        } else {
            self = .text(try c.decode(String.self))
        }
    }
}

struct DecodeSuite {
    let table: QuoteTable
    let recorder: Recorder
    let label: String

    /// At most about 1 GB of JSON: whole tickers from the start of the table.
    var sliceTickers: Int { min(table.tickers.count, max(1, 1_000_000_000 / max(1, table.tickers[0].rowCount * 112))) }

    func run() throws {
        let tickers = sliceTickers
        let start = Date()
        let bodies = (0 ..< tickers).map { QuoteGenerator.datasetJSON(table, ticker: $0) }
        let jsonBytes = Double(bodies.reduce(0) { $0 + $1.count })
        // The same generator and seed give the same first tickers: the slice as a table of its own.
        let days = table.tickers[0].rowCount
        let slice = QuoteGenerator(tickers: tickers, days: days, seed: 42).makeTable()
        precondition(
            slice.dates == Column(table.dates.withUnsafeBufferPointer { Array($0.prefix(slice.rowCount)) }),
            "the slice differs from the table's first tickers")
        let csv = QuoteGenerator.datatableCSV(slice)
        let csvBytes = Double(csv.count)
        print(
            String(
                format: "decode input: %d tickers, %.0f MB dataset_data JSON, %.0f MB CSV (written in %.1f s, not timed)",
                tickers, jsonBytes / 1e6, csvBytes / 1e6, Date().timeIntervalSince(start)))

        let runs = 3
        let sliceLabel = "\(slice.rowCount / 1_000_000 > 0 ? "\(slice.rowCount / 1_000_000)M" : "\(slice.rowCount / 1000)k") rows"
        let json = try measure(runs: runs) {
            var rows = 0
            for (code, body) in bodies.enumerated() {
                rows += try QuoteDecoder.decode(body, ticker: table.tickers[code].symbol, source: "bench").table.rowCount
            }
            sink(rows)
        }
        recorder.record(
            Measurement(
                suite: "decode", name: "dataset_data JSON → columns \(sliceLabel) t=1", seconds: json.median,
                spread: json.spread, runs: runs, items: jsonBytes, unit: "B", bytes: jsonBytes,
                note: "\(tickers) responses, newest first"))
        let csvResult = try measure(runs: runs) {
            sink(try QuoteDecoder.decode(csv, source: "bench.csv").table.rowCount)
        }
        recorder.record(
            Measurement(
                suite: "decode", name: "datatable CSV → columns \(sliceLabel) t=1", seconds: csvResult.median,
                spread: csvResult.spread, runs: runs, items: csvBytes, unit: "B", bytes: csvBytes,
                note: "one file, ticker column"))

        // Baselines on a few responses: they are two to three orders of magnitude slower.
        let few = Array(bodies.prefix(3)).map { Data($0) }
        let fewBytes = Double(few.reduce(0) { $0 + $1.count })
        let seed = try measure(runs: 3) { sink(try Self.seedWay(few)) }
        recorder.record(
            Measurement(
                suite: "decode", name: "baseline: seed's way (JSONSerialization + NSNumber + DateFormatter)",
                seconds: seed.median, spread: seed.spread, runs: 3, items: fewBytes, unit: "B", bytes: fewBytes,
                note: String(
                    format: "%d responses; ours is %.0f× faster", few.count,
                    (jsonBytes / json.median) / (fewBytes / seed.median))))
        let codable = try measure(runs: 3) {
            var rows = 0
            for body in few { rows += try JSONDecoder().decode(CodableDatasetData.self, from: body).dataset_data.data.count }
            sink(rows)
        }
        recorder.record(
            Measurement(
                suite: "decode", name: "baseline: JSONDecoder with Codable structs",
                seconds: codable.median, spread: codable.spread, runs: 3, items: fewBytes, unit: "B", bytes: fewBytes,
                note: String(
                    format: "%d responses; ours is %.0f× faster", few.count,
                    (jsonBytes / json.median) / (fewBytes / codable.median))))
    }

    /// The seed tutorials' reader: JSONSerialization into [String: Any], force-casts to NSNumber,
    /// dates through DateFormatter, one struct (of Float, as they stored) per row.
    static func seedWay(_ bodies: [Data]) throws -> Int {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd"
        formatter.timeZone = TimeZone(identifier: "UTC")
        var rows = [SeedRow]()
        for body in bodies {
            guard let root = try JSONSerialization.jsonObject(with: body) as? [String: Any],
                let dataset = root["dataset_data"] as? [String: Any],
                let data = dataset["data"] as? [[Any]]
            else { continue }
            for row in data {
                guard row.count >= 13, let day = row[0] as? String, let date = formatter.date(from: day) else { continue }
                func f(_ i: Int) -> Float { (row[i] as? NSNumber)?.floatValue ?? 0 }
                rows.append(
                    SeedRow(
                        date: date, open: f(1), high: f(2), low: f(3), close: f(4), volume: f(5), exDividend: f(6),
                        splitRatio: f(7), adjOpen: f(8), adjHigh: f(9), adjLow: f(10), adjClose: f(11), adjVolume: f(12)))
            }
        }
        return rows.count
    }
}
