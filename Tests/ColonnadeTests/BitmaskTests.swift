import Testing
@testable import Colonnade
import ColonnadeTestSupport

@Suite struct BitmaskTests {
    static let sizes = [0, 1, 63, 64, 65, 127, 128, 129, 4095, 4096, 4097, 10_000]

    func randomMask(_ n: Int, _ rng: inout SplitMix64, density: Double = 0.5) -> (Bitmask, [Bool]) {
        var bools = [Bool]()
        var m = Bitmask(count: n)
        for i in 0 ..< n {
            let b = rng.nextUnit() < density
            bools.append(b)
            if b { m[i] = true }
        }
        return (m, bools)
    }

    func checkPadding(_ m: Bitmask) {
        let tail = m.count & 63
        guard tail != 0 else { return }
        m.withUnsafeWords { w in #expect(w[w.count - 1] >> UInt64(tail) == 0, "padding bits must stay zero") }
    }

    @Test(arguments: sizes)
    func setAlgebraMatchesBoolReferenceAcrossWordBoundaries(n: Int) {
        var rng = SplitMix64(seed: UInt64(n) + 1)
        let (a, ab) = randomMask(n, &rng)
        let (b, bb) = randomMask(n, &rng, density: 0.3)
        let and = a.intersection(b), or = a.union(b), diff = a.subtracting(b), not = a.complemented()
        for i in 0 ..< n {
            #expect(and[i] == (ab[i] && bb[i]))
            #expect(or[i] == (ab[i] || bb[i]))
            #expect(diff[i] == (ab[i] && !bb[i]))
            #expect(not[i] == !ab[i])
        }
        for m in [and, or, diff, not] { checkPadding(m) }
        #expect(a.nonzeroBitCount == ab.filter { $0 }.count)
        #expect(Array(a.setRows) == ab.indices.filter { ab[$0] })
        #expect(not.nonzeroBitCount == n - a.nonzeroBitCount)
        var all = Bitmask(count: n)
        all.setAll()
        checkPadding(all)
        #expect(all.nonzeroBitCount == n)
    }

    @Test("A sparsely written mask (as-of screens) starts clear, on mapped pages from 64 KB and on the allocator below")
    func sparselyWrittenMaskStartsClear() {
        // 10 M bits (1.25 MB of words) and 524,288 bits (64 KB): anonymous mappings; 1,000 and
        // 65 bits: the allocator.
        for count in [10_000_000, 524_288, 1_000, 65] {
            var mask = Bitmask(sparselyWrittenCount: count)
            #expect(mask.count == count)
            #expect(mask.nonzeroBitCount == 0)
            let rows = [0, count / 3, count - 1]
            for r in rows { mask[r] = true }
            var seen: [Int] = []
            mask.forEachSetRow {
                seen.append($0)
                return true
            }
            #expect(seen == rows.sorted(), "\(count) bits")
            let words = mask.withUnsafeMutableWords { Array($0) }
            #expect(words.count == Bitmask.wordCount(forBits: count))
        }
    }

    @Test func rangeInsertAndRemoveMatchReference() {
        var rng = SplitMix64(seed: 7)
        for n in Self.sizes where n > 0 {
            for _ in 0 ..< 50 {
                var (m, ref) = randomMask(n, &rng)
                var lo = Int(rng.next() % UInt64(n)), hi = Int(rng.next() % UInt64(n + 1))
                if lo > hi { swap(&lo, &hi) }
                let insert = rng.next() % 2 == 0
                if insert { m.insert(rowsIn: lo ..< hi) } else { m.remove(rowsIn: lo ..< hi) }
                for i in lo ..< hi { ref[i] = insert }
                #expect(Array(m.setRows) == ref.indices.filter { ref[$0] })
                #expect(m.nonzeroBitCount(in: lo ..< hi) == ref[lo ..< hi].filter { $0 }.count)
                checkPadding(m)
            }
        }
    }

    @Test func forEachSetRowStopsEarlyAndHonoursRange() {
        var m = Bitmask(count: 300)
        for r in stride(from: 0, to: 300, by: 7) { m[r] = true }
        var seen = [Int]()
        m.forEachSetRow(in: 50 ..< 200) {
            seen.append($0)
            return seen.count < 5
        }
        #expect(seen == [56, 63, 70, 77, 84])
    }

    @Test func appendBuildsValidityAndCopiesOnWrite() {
        var m = Bitmask(count: 0)
        for i in 0 ..< 200 { m.append(i % 3 == 0) }
        let copy = m
        m[0] = false
        #expect(copy[0] == true)
        #expect(m.count == 200)
        #expect(copy.nonzeroBitCount == 67)
    }
}
