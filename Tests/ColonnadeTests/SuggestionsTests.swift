import Testing
@testable import Colonnade

@Suite struct SuggestionsTests {
    @Test func swappedLettersAreOneEdit() {
        #expect(Suggestions.closest(to: "hihg", among: ["open", "high", "low", "close"]) == ["high"])
    }

    @Test func missingLetterIsFound() {
        #expect(Suggestions.closest(to: "lmit", among: ["snapshot", "limit", "timing", "format"]) == ["limit"])
    }

    @Test func longColumnNameWithTranspositionIsFound() {
        let columns = ["open", "high", "low", "close", "adj_open", "adj_close", "adj_volume"]
        #expect(Suggestions.closest(to: "adj_clsoe", among: columns) == ["adj_close"])
    }

    @Test func nothingCloseGivesNoSuggestion() {
        #expect(Suggestions.closest(to: "zebra", among: ["filter", "info", "verify", "generate"]).isEmpty)
        #expect(Suggestions.closest(to: "x", among: []).isEmpty)
    }

    @Test func comparisonIgnoresCase() {
        #expect(Suggestions.closest(to: "LIMIT", among: ["limit"]) == ["limit"])
        #expect(Suggestions.closest(to: "Flter", among: ["filter", "info"]) == ["filter"])
    }

    @Test func tiesAreReportedInCandidateOrderWithoutDuplicates() {
        #expect(Suggestions.closest(to: "lo", among: ["low", "log", "low", "high"]) == ["low", "log"])
    }

    @Test func onlyTheNearestDistanceIsReported() {
        #expect(Suggestions.closest(to: "clos", among: ["cost", "close"]) == ["close"])
    }

    @Test func explicitThresholdIsRespected() {
        #expect(Suggestions.closest(to: "lmit", among: ["limit"], maxDistance: 0).isEmpty)
        #expect(Suggestions.closest(to: "generat", among: ["generate"], maxDistance: 1) == ["generate"])
        // The default for a 12-letter word tolerates four edits.
        #expect(Suggestions.closest(to: "conccurrenyy", among: ["concurrency"]) == ["concurrency"])
    }

    @Test func distanceMatchesTheOptimalStringAlignmentDefinition() {
        func distance(_ a: String, _ b: String) -> Int {
            Suggestions.editDistance(Array(a), Array(b), limit: .max)
        }
        #expect(distance("", "abc") == 3)
        #expect(distance("abc", "abc") == 0)
        #expect(distance("ab", "ba") == 1)
        #expect(distance("kitten", "sitting") == 3)
        // OSA, unlike unrestricted Damerau–Levenshtein, does not edit a transposed pair again.
        #expect(distance("ca", "abc") == 3)
    }
}
