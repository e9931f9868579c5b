@testable import ColonnadeCLI
import DataLink
import Testing

/// The progress line of `fetch --bulk` on a terminal: one line rewritten in place, cleared at the
/// end, nothing at all when off (not a terminal, --quiet, --debug).
@Suite struct BulkProgressTests {
    @Test func theLineShowsTheStatusAndTheWaitSoFar() {
        let writer = MemoryOutputWriter()
        let progress = BulkProgress(enabled: true, writer: writer)
        progress.report(.waiting(status: "creating", elapsed: .seconds(45), next: .seconds(5)))
        progress.report(.waiting(status: "regenerating", elapsed: .milliseconds(754_900), next: .seconds(30)))
        progress.report(.linkRefused(status: 403))
        progress.report(.downloading(host: "bucket.example", offset: 0))
        progress.report(.downloading(host: "bucket.example", offset: 1_234_567))
        progress.finish()
        let erase = "\r\u{1B}[K"
        #expect(
            writer.text == erase + "waiting for the export: creating, 0:45"
                + erase + "waiting for the export: regenerating, 12:34"
                + erase + "the download link was refused (HTTP 403); asking for a fresh one"
                + erase + "downloading the export from bucket.example"
                + erase + "downloading the export from bucket.example, resuming at byte 1,234,567"
                + erase)
    }

    @Test func offMeansNothingIsWritten() {
        let writer = MemoryOutputWriter()
        let progress = BulkProgress(enabled: false, writer: writer)
        progress.report(.waiting(status: "creating", elapsed: .seconds(1), next: .seconds(2)))
        progress.finish()
        #expect(writer.text.isEmpty)
        let quiet = MemoryOutputWriter()
        BulkProgress(enabled: true, writer: quiet).finish()
        #expect(quiet.text.isEmpty, "nothing to clear when nothing was shown")
    }
}
