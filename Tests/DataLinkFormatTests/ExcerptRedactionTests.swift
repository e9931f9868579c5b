import Colonnade
import DataLinkFormat
import Foundation
import DecodingTestSupport
import Testing

/// Error excerpts quote the input; a saved response can hold an API key. Whatever the cut, no
/// character of a key-like token, and no value of an `api_key=` parameter, is ever quoted.
@Suite("Error excerpts never show a key")
struct ExcerptRedactionTests {
    /// Shaped like a Nasdaq Data Link key: 20 letters and digits (made up).
    static let key = "Zq9Xw7Vu5Ts3Rp1No8Ml"

    /// A number field of `padding` dots, then the key: the 32-byte excerpt is cut before the key,
    /// at each of its characters, and after it. The key is a token of its own (dots are not key
    /// characters), so the quoted excerpt must be exactly the dots and `<redacted>`.
    @Test(arguments: 0 ... 34)
    func anExcerptCutInsideAKeyShowsNoneOfIt(padding: Int) {
        let field = String(repeating: ".", count: padding) + Self.key
        let text = "Date,Open,High\n2017-01-03,1.0,\(field)\n"
        guard case let .badNumber(_, found)? = Decode.error(text, source: "saved.csv") else {
            Issue.record("expected a bad number, got \(String(describing: Decode.error(text)))")
            return
        }
        let shownDots = min(padding, 32)
        let cut = padding + Self.key.count > 32
        let expected = "'" + String(repeating: ".", count: shownDots) + (padding < 32 ? "<redacted>" : "") + (cut ? "…'" : "'")
        #expect(found == expected, "padding \(padding)")
        let description = Decode.failure(text, source: "saved.csv").map(String.init(describing:)) ?? ""
        for length in 1 ... Self.key.count {
            #expect(!description.contains(Self.key.prefix(length) + "…"), "a start of the key, cut: \(description)")
        }
        #expect(!description.contains("Zq"), "\(description)")
    }

    /// The excerpt may start inside the key too (a JSON number scanned from its middle): the
    /// whole token is judged, so its tail is not shown either.
    @Test func aKeyInAJSONValueIsRedactedWhole() {
        let text = #"{"dataset_data":{"column_names":["Date","Open"],"data":[["2017-01-03",12\#(Self.key)]]}}"#
        let description = Decode.failure(text).map(String.init(describing:)) ?? "decoded"
        #expect(description.contains("<redacted>"), "\(description)")
        #expect(!description.contains("Zq9") && !description.contains("No8Ml"), "\(description)")
    }

    @Test(arguments: ["api_key=abc123", "api_key=short", "API_KEY: x1", "token=zz", "password=hunter2"])
    func credentialParameterValuesAreRedactedWhateverTheirLength(field: String) {
        let text = "Date,Open\n2017-01-03,\(field)\n"
        guard case let .badNumber(_, found)? = Decode.error(text) else {
            Issue.record("expected a bad number, got \(String(describing: Decode.error(text)))")
            return
        }
        #expect(found.contains("<redacted>"), "\(found)")
        let value = field.split(whereSeparator: { $0 == "=" || $0 == ":" }).last.map(String.init) ?? ""
        #expect(!found.contains(value.trimmingCharacters(in: .whitespaces)), "\(found)")
    }

    @Test(arguments: ["abc", "12.5x", "2017-13-45", "adj_close", "USD-1234"])
    func ordinaryExcerptsAreShownAsBefore(field: String) {
        let text = "Date,Open\n2017-01-03,\(field)\n"
        guard case let .badNumber(_, found)? = Decode.error(text) else {
            Issue.record("expected a bad number, got \(String(describing: Decode.error(text)))")
            return
        }
        #expect(!found.contains("<redacted>"), "\(found)")
    }

    /// An API error body saved to a file: `We could not recognize your API key: '…'`.
    @Test(arguments: [
        #"{"quandl_error":{"code":"QEAx01","message":"We could not recognize your API key: '\#(ExcerptRedactionTests.key)'. Please check it."}}"#,
        "code,message\nQEAx01,\"We could not recognize your API key: '\(ExcerptRedactionTests.key)'. Please check it.\"\n",
        "code,message\nQEAx01,api_key=\(ExcerptRedactionTests.key.prefix(5)) is not valid\n",
    ])
    func anAPIErrorMessageNeverShowsTheKey(body: String) {
        guard case let .apiError(_, code, message)? = Decode.failure(body) else {
            Issue.record("expected an API error, got \(String(describing: Decode.failure(body)))")
            return
        }
        #expect(code == "QEAx01")
        #expect(message.contains("<redacted>"), "\(message)")
        #expect(!message.contains("Zq9"), "\(message)")
        #expect(message.hasPrefix(message.contains("api_key") ? "api_key=" : "We could not recognize your API key"))
    }

    @Test func redactingKeepsOrdinaryTextAndRedactsKeyLikeTokens() {
        #expect(
            CredentialRedaction.redacting("expected a number, found 'abc' at 2014-01-02") == "expected a number, found 'abc' at 2014-01-02")
        #expect(CredentialRedaction.redacting("key \(Self.key).") == "key <redacted>.")
        #expect(CredentialRedaction.redacting("?api_key=x&y=1") == "?api_key=<redacted>&y=1")
        #expect(CredentialRedaction.redacting("12345678901234567890") == "12345678901234567890", "digits only: a number")
        #expect(CredentialRedaction.redacting("close_price_adjusted") == "close_price_adjusted", "letters only: a name")
    }
}
