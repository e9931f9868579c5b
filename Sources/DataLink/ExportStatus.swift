import Foundation

/// One answer to a whole-table export request (`qopts.export=true`): whether the export file is
/// ready and where to download it.
///
/// JSON: `{"datatable_bulk_download": {"file": {"link", "status", "data_snapshot_time"},
/// "datatable": {"last_refreshed_time"}}}`; CSV: the columns
/// `file.link,file.status,file.data_snapshot_time,datatable.last_refreshed_time` and one row.
/// `status == "fresh"` means the link is ready; anything else (`creating`, `regenerating`) means
/// ask again later.
public struct ExportStatus: Sendable, Hashable {
    /// `fresh`, `creating`, `regenerating`, …
    public var status: String
    /// The download link once the file exists (a signed URL: a secret, never print it).
    public var link: URL?
    /// When the exported data was taken (`2018-04-16 10:42:07 UTC`), if given.
    public var dataSnapshotTime: String?

    /// A status from its parts.
    public init(status: String, link: URL?, dataSnapshotTime: String? = nil) {
        self.status = status
        self.link = link
        self.dataSnapshotTime = dataSnapshotTime
    }

    /// Whether the link is ready to download.
    public var isFresh: Bool { status == "fresh" && link != nil }

    /// Reads a JSON or CSV export-status body; nil when it is neither shape (the caller reports
    /// the body, redacted).
    public static func parse(_ body: Data) -> ExportStatus? {
        guard !body.isEmpty, body.count <= 64 * 1024 else { return nil }
        let first = body.first { !Redactor.isASCIIWhitespace($0) }
        if first == UInt8(ascii: "{") {
            guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
                let bulk = object["datatable_bulk_download"] as? [String: Any],
                let file = bulk["file"] as? [String: Any],
                let status = file["status"] as? String
            else { return nil }
            return ExportStatus(
                status: status, link: (file["link"] as? String).flatMap(Self.link),
                dataSnapshotTime: file["data_snapshot_time"] as? String)
        }
        let lines = String(decoding: body, as: UTF8.self).split(whereSeparator: \.isNewline).map(String.init)
        guard lines.count >= 2 else { return nil }
        let names = fields(lines[0]), values = fields(lines[1])
        guard let statusIndex = names.firstIndex(of: "file.status"), statusIndex < values.count else { return nil }
        let linkIndex = names.firstIndex(of: "file.link")
        let timeIndex = names.firstIndex(of: "file.data_snapshot_time")
        return ExportStatus(
            status: values[statusIndex],
            link: linkIndex.flatMap { $0 < values.count ? Self.link(values[$0]) : nil },
            dataSnapshotTime: timeIndex.flatMap { $0 < values.count && !values[$0].isEmpty ? values[$0] : nil })
    }

    /// An absolute http(s) URL, or nil.
    static func link(_ text: String) -> URL? {
        guard let url = URL(string: text.trimmingASCIIWhitespace()), let scheme = url.scheme?.lowercased(),
            scheme == "https" || scheme == "http", url.host != nil
        else { return nil }
        return url
    }

    /// The fields of one CSV line (double-quoted fields allowed).
    static func fields(_ line: String) -> [String] {
        var out: [String] = []
        var current = ""
        var quoted = false
        var previousWasQuote = false
        for c in line {
            if quoted {
                if c == "\"" {
                    quoted = false
                    previousWasQuote = true
                } else {
                    current.append(c)
                }
            } else if c == "\"" {
                if previousWasQuote { current.append("\"") }
                quoted = true
            } else if c == "," {
                out.append(current.trimmingASCIIWhitespace())
                current = ""
                previousWasQuote = false
            } else {
                current.append(c)
                previousWasQuote = false
            }
        }
        out.append(current.trimmingASCIIWhitespace())
        return out
    }
}
