import Foundation

/// The charts `colonnade-bench --svg DIR` writes from a run's measurements (or from a saved
/// `--json` report with `--from-json`): query throughput by threads and zone maps beside the
/// seed-style baseline, the selectivity sweep, and loading speeds.
enum BenchmarkCharts {
    /// `(file name, SVG)` for each chart the measurements allow.
    /// - Throws: `BenchError` when a chart is drawn with a series that has no value in any
    ///   group (a result name that no longer matches): a chart never silently loses a series.
    static func render(_ report: Report) throws -> [(String, String)] {
        let results = report.results
        let m = report.machine
        let subtitle = "\(m.cpuModel), \(m.cores) cores, size \(m.size), commit \(m.commit), \(String(m.date.prefix(10))); medians"
        func find(_ suite: String, _ prefix: String, _ suffix: String = "") -> Measurement? {
            results.first {
                $0.suite == suite && $0.name.hasPrefix(prefix) && $0.name.hasSuffix(suffix) && $0.seconds.isFinite && $0.seconds > 0
            }
        }
        var charts: [(String, String)] = []

        // Queries: rows scanned per second, log scale.
        let queryGroups = ["Q1", "Q2", "Q3", "Q4"].compactMap { q -> BarChartSVG.Group? in
            let cells = ["t=1 zonemaps=off", "t=1 zonemaps=on", "t=\(m.threads) zonemaps=off", "t=\(m.threads) zonemaps=on"]
                .map { find("scan", q + " \(label(m.size)) ", $0) }
            // The two baselines by their names in ScanSuite (a name that matches nothing leaves a gap: checked by report.py).
            let baselines = [find("scan", q + " plain loop over structs"), find("scan", q + " seed-style")]
            let values = (cells + baselines).map { $0.map { $0.perSecond / 1e6 } }
            return values.contains { $0 != nil } ? BarChartSVG.Group(label: q, values: values) : nil
        }
        if !queryGroups.isEmpty {
            let chart = BarChartSVG(
                title: "Queries, in-memory kernels: rows scanned per second", subtitle: subtitle, unit: "M rows/s",
                series: [
                    "1 thread", "1 thread, zone maps", "\(m.threads) threads", "\(m.threads) threads, zone maps",
                    "plain loop over structs", "seed-style (structs + [Bool])",
                ],
                groups: queryGroups, logScale: true)
            charts.append(("queries.svg", try checked(chart, "queries.svg").render()))
        }

        // Selectivity sweep: one Double range at several selectivities.
        let kept = ["1/1000", "1/50", "1/2", "all"]
        let sweep = kept.compactMap { k -> BarChartSVG.Group? in
            let off = find("scan", "range Double", "(kept \(k)) t=1 zonemaps=off")
            let on = find("scan", "range Double", "(kept \(k)) t=1 zonemaps=on")
            let values = [off, on].map { $0.map { $0.perSecond / 1e9 } }
            return values.contains { $0 != nil } ? BarChartSVG.Group(label: "kept \(k)", values: values) : nil
        }
        if !sweep.isEmpty {
            var groups = sweep
            if let roof = find("scan", "memory roof", "t=1") {
                groups.append(BarChartSVG.Group(label: "memory roof (plain read)", values: [roof.perSecond / 1e9, nil]))
            }
            let chart = BarChartSVG(
                title: "Selectivity sweep: lo < x < hi on one Float64 column, 1 thread", subtitle: subtitle,
                unit: "G rows/s", series: ["zone maps off", "zone maps on"], groups: groups)
            charts.append(("selectivity.svg", try checked(chart, "selectivity.svg").render()))
        }

        // Loading: bytes per second.
        let loading: [(String, Measurement?)] = [
            ("JSON → columns", find("decode", "dataset_data JSON")),
            ("CSV → columns", find("decode", "datatable CSV")),
            ("JSONDecoder + Codable", find("decode", "baseline: JSONDecoder")),
            ("seed's JSONSerialization", find("decode", "baseline: seed's way")),
            ("snapshot save + fsync", find("snapshot", "save ", "with fsync (file + dir)")),
            ("snapshot load, verified", find("snapshot", "load ", "with verification")),
            // No bar for the unverified load: it maps the file and reads its structure only, so
            // bytes per second of the file would be bytes never read.
            ("PropertyListDecoder load", find("snapshot", "baseline: PropertyListDecoder")),
        ]
        let loadGroups = loading.compactMap { label, measurement in
            measurement.flatMap { $0.bytes > 0 ? BarChartSVG.Group(label: label, values: [$0.bytes / $0.seconds / 1e6]) : nil }
        }
        if !loadGroups.isEmpty {
            let chart = BarChartSVG(
                title: "Loading: MB per second", subtitle: subtitle, unit: "MB/s", series: ["MB/s"],
                groups: loadGroups, logScale: true)
            charts.append(("loading.svg", try checked(chart, "loading.svg").render()))
        }
        return charts
    }

    /// `chart`, or an error naming the series no group has a value for.
    static func checked(_ chart: BarChartSVG, _ name: String) throws -> BarChartSVG {
        for (i, series) in chart.series.enumerated() where !chart.groups.contains(where: { i < $0.values.count && $0.values[i] != nil }) {
            throw BenchError("\(name): no result for the series '\(series)'")
        }
        return chart
    }

    /// The row-count label of a size ("5M"), as in the result names.
    static func label(_ size: String) -> String {
        switch size {
        case "small": return "252k"
        case "medium": return "5M"
        default: return "20M"
        }
    }

    /// Writes the charts into `directory` (created if needed); returns the paths written.
    static func write(_ report: Report, to directory: String) throws -> [String] {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return try render(report).map { name, svg in
            let path = (directory as NSString).appendingPathComponent(name)
            try Data(svg.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
            return path
        }
    }
}
