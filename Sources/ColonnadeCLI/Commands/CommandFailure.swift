/// A runtime failure with a message and an optional hint (exit status 1).
struct CommandFailure: CLIReportableError {
    var message: String
    var hint: String?
    var excerpt: [String] = []

    init(_ message: String, hint: String? = nil, excerpt: [String] = []) {
        self.message = message
        self.hint = hint
        self.excerpt = excerpt
    }
}
