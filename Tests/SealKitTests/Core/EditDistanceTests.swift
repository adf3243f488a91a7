#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing

import SealKit

/// The edit distance behind every "did you mean" and the near-miss rule fills only the cells near the
/// table's diagonal: its answers are the full table's, and long names cost time linear in their length (a
/// schema field of 10,000 letters beside a profile member two edits from it took seconds to compare).
@Suite struct EditDistanceTests {
    /// Optimal string alignment over the whole table, nothing skipped: the answer the banded one must give.
    static func fullTable(_ a: String, _ b: String) -> Int {
        let s = Array(a.unicodeScalars), t = Array(b.unicodeScalars)
        var d = [[Int]](repeating: [Int](repeating: 0, count: t.count + 1), count: s.count + 1)
        for i in 0...s.count { d[i][0] = i }
        for j in 0...t.count { d[0][j] = j }
        for i in stride(from: 1, through: s.count, by: 1) {
            for j in stride(from: 1, through: t.count, by: 1) {
                let cost = s[i - 1] == t[j - 1] ? 0 : 1
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
                if i > 1, j > 1, s[i - 1] == t[j - 2], s[i - 2] == t[j - 1] { d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1) }
            }
        }
        return d[s.count][t.count]
    }

    @Test func theBandedDistanceIsTheFullTables() {
        // Few letters, so random pairs share runs, swaps and repeats; one beyond ASCII and one beyond the BMP.
        let letters: [Unicode.Scalar] = ["a", "b", "c", "é", "😀"]
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        func word() -> String {
            var text = ""
            for _ in 0..<next(10) { text.unicodeScalars.append(letters[next(letters.count)]) }
            return text
        }
        var compared = 0
        for _ in 0..<4_000 {
            let a = word()
            // Half the pairs are a few edits apart, so distances within the limits are common, not only "far".
            var b = a
            if next(2) == 0 {
                b = word()
            } else {
                for _ in 0..<next(4) {
                    var scalars = Array(b.unicodeScalars)
                    let at = next(scalars.count + 1)
                    switch next(4) {
                    case 0: scalars.insert(letters[next(letters.count)], at: at)
                    case 1 where at < scalars.count: scalars.remove(at: at)
                    case 2 where at < scalars.count: scalars[at] = letters[next(letters.count)]
                    case 3 where at + 1 < scalars.count: scalars.swapAt(at, at + 1)
                    default: break
                    }
                    b = String(String.UnicodeScalarView(scalars))
                }
            }
            let full = Self.fullTable(a, b)
            for limit in -1...4 {
                let expected = limit < 0 ? limit + 1 : min(full, limit + 1)
                #expect(TextSafety.editDistance(a, b, limit: limit) == expected, "\(a) \(b) limit \(limit)")
                compared += 1
            }
        }
        #expect(compared == 24_000)
    }

    /// The CPU time this thread spends in `body`, which does not grow when other processes take the cores.
    static func cpuTime(_ body: () -> Void) -> Double {
        var start = timespec(), end = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start)
        body()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &end)
        return Double(end.tv_sec - start.tv_sec) + Double(end.tv_nsec - start.tv_nsec) / 1e9
    }

    /// A name of n letters beside one two edits from it, and the same at 4n: linear work takes about 4 times
    /// as long, quadratic 16. The longer pair passes once one comparison takes under 8 times the shorter's
    /// fastest of five; a comparison over 16 times it is quadratic beyond doubt and ends the tries.
    @Test(.timeLimit(.minutes(2))) func nearMissesCostTimeLinearInTheNamesLength() {
        func names(_ length: Int) -> (String, String) {
            (String(repeating: "a", count: length), String(repeating: "a", count: length - 2) + "bb")
        }
        let short = names(2_500), long = names(10_000)
        var shortest = Double.infinity
        for _ in 0..<5 { shortest = min(shortest, Self.cpuTime { #expect(TextSafety.isNearMiss(short.0, short.1)) }) }
        var longest = Double.infinity
        for _ in 0..<5 {
            longest = min(longest, Self.cpuTime { #expect(TextSafety.isNearMiss(long.0, long.1)) })
            if longest < 8 * shortest || longest > 16 * shortest { break }
        }
        #expect(longest < 8 * shortest, "4x the name took \(longest / shortest)x the time (linear: 4, quadratic: 16)")
    }
}
