import Testing
@testable import Colonnade
import ColonnadeTestSupport

@Suite struct SnapshotChecksumTests {
    func bytes(_ n: Int, seed: UInt64) -> [UInt8] {
        var rng = SplitMix64(seed: seed)
        return (0 ..< n).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
    }

    /// Test vectors, also listed in docs/SNAPSHOT_FORMAT.md for other implementations (checked
    /// against an independent Python implementation of the documented algorithm).
    @Test func knownVectors() {
        #expect(SnapshotChecksum.hash([], seed: 0) == Self.vectors[0])
        #expect(SnapshotChecksum.hash(Array("COLNSNAP".utf8), seed: 0) == Self.vectors[1])
        #expect(SnapshotChecksum.hash((0 ..< 200).map { UInt8($0) }, seed: 4096) == Self.vectors[2])
    }
    static let vectors: [UInt64] = [0xDA81_D101_065C_EE94, 0x41C3_B6CF_545A_E0ED, 0x2864_049B_FD86_B96D]

    @Test func streamingInWholeStripesEqualsOneShot() {
        let data = bytes(64 * 37 + 13, seed: 1)
        var h = SnapshotChecksum(seed: 77)
        data.withUnsafeBytes { b in
            h.combine(stripes: b.baseAddress!, stripeCount: 5)
            h.combine(stripes: b.baseAddress! + 5 * 64, stripeCount: 30)
            h.combineFinal(UnsafeRawBufferPointer(rebasing: b[(35 * 64)...]))
        }
        #expect(h.value == SnapshotChecksum.hash(data, seed: 77))
    }

    @Test func everyChangeConfinedToOneWordIsDetected() {
        var rng = SplitMix64(seed: 2)
        for trial in 0 ..< 300 {
            let n = 8 + Int(rng.next() % 600)
            var data = bytes(n, seed: UInt64(trial))
            let before = SnapshotChecksum.hash(data, seed: 5)
            let word = Int(rng.next() % UInt64((n + 7) / 8))
            let i = min(word * 8 + Int(rng.next() % 8), n - 1)
            data[i] ^= UInt8(1 + rng.next() % 255)
            #expect(SnapshotChecksum.hash(data, seed: 5) != before, "trial \(trial)")
        }
    }

    @Test func positionLengthAndSeedMatter() {
        let data = bytes(256, seed: 3)
        let h = SnapshotChecksum.hash(data, seed: 0)
        var swappedStripes = data
        swappedStripes.replaceSubrange(0 ..< 64, with: data[64 ..< 128])
        swappedStripes.replaceSubrange(64 ..< 128, with: data[0 ..< 64])
        #expect(SnapshotChecksum.hash(swappedStripes, seed: 0) != h)
        var swappedWords = data
        swappedWords.replaceSubrange(0 ..< 8, with: data[8 ..< 16])
        swappedWords.replaceSubrange(8 ..< 16, with: data[0 ..< 8])
        #expect(SnapshotChecksum.hash(swappedWords, seed: 0) != h)
        #expect(SnapshotChecksum.hash(data + [0], seed: 0) != h)
        #expect(SnapshotChecksum.hash(data, seed: 1) != h)
        #expect(
            SnapshotChecksum.hash([UInt8](repeating: 0, count: 64), seed: 0)
                != SnapshotChecksum.hash([UInt8](repeating: 0, count: 128), seed: 0))
    }
}
