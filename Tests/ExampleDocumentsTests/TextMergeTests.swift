import Foundation
import Testing
import TestSupport
@testable import ExampleDocuments

/// One row of the merge table: what the two sides made of `base`, and the expected result.
struct MergeCase: CustomTestStringConvertible, Sendable {
    let name: String
    let base: String
    let ours: String
    let theirs: String
    let expected: TextMerge.MergeResult

    var testDescription: String { name }
}

private func merged(_ text: String) -> TextMerge.MergeResult { .merged(text) }
private func conflict(_ lines: Range<Int>) -> TextMerge.MergeResult { .conflict(baseLines: lines) }

@Suite("TextMerge: line-based three-way merge")
struct TextMergeTests {
    static let cases: [MergeCase] = [
        // Trivial sides.
        MergeCase(name: "nothing changed", base: "a\nb\n", ours: "a\nb\n", theirs: "a\nb\n", expected: merged("a\nb\n")),
        MergeCase(name: "only ours changed", base: "a\nb\n", ours: "a\nB\n", theirs: "a\nb\n", expected: merged("a\nB\n")),
        MergeCase(name: "only theirs changed", base: "a\nb\n", ours: "a\nb\n", theirs: "A\nb\n", expected: merged("A\nb\n")),
        MergeCase(name: "both made the same change", base: "a\nb\nc\n", ours: "a\nX\nc\n", theirs: "a\nX\nc\n",
                  expected: merged("a\nX\nc\n")),
        MergeCase(name: "empty base, same text", base: "", ours: "x\n", theirs: "x\n", expected: merged("x\n")),

        // Appending at the end: base + ours' lines + theirs' lines.
        MergeCase(name: "both append different lines", base: "a\nb\n", ours: "a\nb\nours\n", theirs: "a\nb\ntheirs\n",
                  expected: merged("a\nb\nours\ntheirs\n")),
        MergeCase(name: "both append several lines", base: "a\n", ours: "a\n1\n2\n", theirs: "a\nx\ny\nz\n",
                  expected: merged("a\n1\n2\nx\ny\nz\n")),
        MergeCase(name: "both append to an empty base", base: "", ours: "ours\n", theirs: "theirs\n",
                  expected: merged("ours\ntheirs\n")),
        MergeCase(name: "both append the same line: taken once", base: "a\n", ours: "a\nsame\n", theirs: "a\nsame\n",
                  expected: merged("a\nsame\n")),
        MergeCase(name: "appended lines that repeat base lines", base: "a\n\n", ours: "a\n\n\n", theirs: "a\n\nt\n",
                  expected: merged("a\n\n\nt\n")),
        MergeCase(name: "ours appends without a final newline: one is added (LF)", base: "a\n", ours: "a\nours",
                  theirs: "a\ntheirs\n", expected: merged("a\nours\ntheirs\n")),
        MergeCase(name: "ours appends without a final newline: one is added (CRLF)", base: "a\r\n", ours: "a\r\nours",
                  theirs: "a\r\ntheirs", expected: merged("a\r\nours\r\ntheirs")),
        MergeCase(name: "base without final newline: both complete it and append", base: "a\nb", ours: "a\nb\nc\n",
                  theirs: "a\nb\nd\n", expected: merged("a\nb\nc\nd\n")),
        MergeCase(name: "base without final newline: completed with different endings", base: "a\nb", ours: "a\nb\nc\n",
                  theirs: "a\nb\r\nd\n", expected: conflict(1..<2)),
        MergeCase(name: "both extend the unterminated last line: same line edited", base: "a\nb", ours: "a\nbX",
                  theirs: "a\nbY", expected: conflict(1..<2)),
        MergeCase(name: "ours edits the top and appends, theirs appends", base: "a\nb\nc\n", ours: "A\nb\nc\no\n",
                  theirs: "a\nb\nc\nt\n", expected: merged("A\nb\nc\no\nt\n")),

        // Edits elsewhere.
        MergeCase(name: "separate lines", base: "1\n2\n3\n4\n5\n", ours: "ONE\n2\n3\n4\n5\n", theirs: "1\n2\n3\n4\nFIVE\n",
                  expected: merged("ONE\n2\n3\n4\nFIVE\n")),
        MergeCase(name: "insertions in different places", base: "1\n2\n3\n", ours: "0\n1\n2\n3\n", theirs: "1\n2\n2.5\n3\n",
                  expected: merged("0\n1\n2\n2.5\n3\n")),
        MergeCase(name: "deletion and an edit elsewhere", base: "1\n2\n3\n4\n", ours: "2\n3\n4\n", theirs: "1\n2\n3\nfour\n",
                  expected: merged("2\n3\nfour\n")),
        MergeCase(name: "ours prepends, theirs appends", base: "m\n", ours: "top\nm\n", theirs: "m\nend\n",
                  expected: merged("top\nm\nend\n")),

        // Overlaps.
        MergeCase(name: "same line changed differently", base: "a\nb\nc\n", ours: "a\nX\nc\n", theirs: "a\nY\nc\n",
                  expected: conflict(1..<2)),
        MergeCase(name: "adjacent lines changed", base: "a\nb\nc\nd\n", ours: "a\nB\nc\nd\n", theirs: "a\nb\nC\nd\n",
                  expected: conflict(1..<3)),
        MergeCase(name: "insertions at the same place (not the end)", base: "a\nb\n", ours: "a\nx\nb\n", theirs: "a\ny\nb\n",
                  expected: conflict(1..<1)),
        MergeCase(name: "one deletes a line the other changes", base: "a\nb\nc\n", ours: "a\nc\n", theirs: "a\nB\nc\n",
                  expected: conflict(1..<2)),
        MergeCase(name: "ours appends, theirs edits the last line", base: "a\nb\n", ours: "a\nb\nc\n", theirs: "a\nB\n",
                  expected: conflict(1..<2)),
        MergeCase(name: "ours removes the final newline, theirs appends", base: "a\nb\n", ours: "a\nb", theirs: "a\nb\nc\n",
                  expected: conflict(1..<2)),
        MergeCase(name: "both append to an empty base without newlines", base: "", ours: "o", theirs: "t",
                  expected: merged("o\nt")),

        // Line endings kept byte for byte.
        MergeCase(name: "CRLF file, separate edits", base: "1\r\n2\r\n3\r\n", ours: "one\r\n2\r\n3\r\n", theirs: "1\r\n2\r\nthree\r\n",
                  expected: merged("one\r\n2\r\nthree\r\n")),
        MergeCase(name: "mixed endings stay mixed", base: "a\r\nb\nc\r\nd\n", ours: "A\r\nb\nc\r\nd\n", theirs: "a\r\nb\nc\r\nD\n",
                  expected: merged("A\r\nb\nc\r\nD\n")),
        MergeCase(name: "a change of line ending is a change", base: "a\nb\nc\n", ours: "a\r\nb\nc\n", theirs: "a\nb\nC\n",
                  expected: merged("a\r\nb\nC\n")),
        MergeCase(name: "line ending changed on both sides differently", base: "a\nb\n", ours: "a\r\nb\n", theirs: "a b\nb\n",
                  expected: conflict(0..<1)),
        MergeCase(name: "a lone CR is not a line ending", base: "a\rb\nc\n", ours: "a\rB\nc\n", theirs: "a\rb\nC\n",
                  expected: conflict(0..<2)),
        MergeCase(name: "CRLF appends on both sides", base: "x\r\n", ours: "x\r\no\r\n", theirs: "x\r\nt\r\n",
                  expected: merged("x\r\no\r\nt\r\n")),
        MergeCase(name: "non-ASCII text", base: "é\n🌍\nz\n", ours: "É\n🌍\nz\n", theirs: "é\n🌍\nZ\n",
                  expected: merged("É\n🌍\nZ\n")),
    ]

    @Test("merge table", arguments: cases)
    func table(_ row: MergeCase) {
        let result = TextMerge.merge(base: row.base, ours: row.ours, theirs: row.theirs)
        #expect(result == row.expected)
        if case .merged(let text) = result, case .merged(let expected) = row.expected {
            #expect(Array(text.utf8) == Array(expected.utf8), "bytes differ")
        }
    }

    @Test("swapping the sides gives the same result when neither appended", arguments: cases)
    func symmetric(_ row: MergeCase) {
        guard !row.name.contains("append") else { return }
        let forward = TextMerge.merge(base: row.base, ours: row.ours, theirs: row.theirs)
        let backward = TextMerge.merge(base: row.base, ours: row.theirs, theirs: row.ours)
        switch (forward, backward) {
        case (.merged(let a), .merged(let b)): #expect(Array(a.utf8) == Array(b.utf8))
        case (.conflict, .conflict): break
        default: Issue.record("\(forward) vs \(backward)")
        }
    }

    @Test("40 appends from each of two writers, merged one at a time, keep all 80 lines in order")
    func interleavedAppends() {
        var file = "title\n"
        for index in 1...40 {
            // Writer A read `file`, appended; meanwhile B appended to the same base and saved first.
            let base = file
            let theirs = base + "B\(index)\n"
            let ours = base + "A\(index)\n"
            guard case .merged(let text) = TextMerge.merge(base: base, ours: ours, theirs: theirs) else {
                Issue.record("conflict at \(index)")
                return
            }
            file = text
        }
        let lines = file.split(separator: "\n")
        #expect(lines.count == 81)
        #expect(lines.filter { $0.hasPrefix("A") }.count == 40)
        #expect(lines.filter { $0.hasPrefix("B") }.count == 40)
    }

    @Test("the diff finds a shortest edit script", arguments: [
        ([1, 2, 3], [1, 2, 3], 0), ([], [1, 2], 2), ([1, 2], [], 2), ([1, 2, 3, 4], [1, 3, 4, 5], 2),
        ([1, 2, 3, 1, 2, 2, 1], [3, 2, 1, 2, 1, 3], 5),  // Myers' paper: D = 5
    ])
    func shortestEdit(_ a: [Int], _ b: [Int], _ distance: Int) {
        let matched = LineDiff.matches(a, b) ?? []
        #expect(a.count + b.count - 2 * matched.count == distance)
        for (i, j) in matched { #expect(a[i] == b[j]) }
        #expect(zip(matched, matched.dropFirst()).allSatisfy { $0.0 < $1.0 && $0.1 < $1.1 })
    }

    @Test("a side that rewrote more lines than the limit is a conflict over the whole text, at once")
    func tooManyDifferences() {
        let count = TextMerge.maximumDifferences
        let base = (0..<count).map { "line \($0)\n" }.joined()
        let rewritten = (0..<count).map { "new \($0)\n" }.joined()
        let theirs = "changed\n" + base.drop { $0 != "\n" }.dropFirst()
        #expect(TextMerge.merge(base: base, ours: rewritten, theirs: String(theirs)) == .conflict(baseLines: 0..<count))
        #expect(LineDiff.matches([1, 2, 3], [4, 5, 6], maximumDifferences: 5) == nil)
        #expect(LineDiff.matches([1, 2, 3], [4, 5, 6], maximumDifferences: 6)?.isEmpty == true)
    }

    @Test("a large text with scattered edits merges correctly")
    func largeText() {
        let base = (0..<5_000).map { "line \($0)\n" }
        var ours = base, theirs = base
        for index in stride(from: 10, to: 5_000, by: 100) { ours[index] = "ours \(index)\n" }
        for index in stride(from: 60, to: 5_000, by: 100) { theirs[index] = "theirs \(index)\n" }
        var expected = base
        for index in stride(from: 10, to: 5_000, by: 100) { expected[index] = "ours \(index)\n" }
        for index in stride(from: 60, to: 5_000, by: 100) { expected[index] = "theirs \(index)\n" }
        let result = TextMerge.merge(base: base.joined(), ours: ours.joined(), theirs: theirs.joined())
        #expect(result == .merged(expected.joined()))
    }
}


@Suite("TextMerge: generated edits")
struct TextMergeGeneratedTests {
    private enum Edit { case replace, delete, insertBefore }

    /// What an edit (by the side named `tag`) makes of line `index`.
    private static func render(_ index: Int, _ line: (String, String), _ edit: Edit?, tag: String) -> [String] {
        let (content, ending) = line
        switch edit {
        case nil: return [content + ending]
        case .replace?: return ["\(tag)\(index)" + ending]
        case .delete?: return []
        case .insertBefore?: return ["\(tag)-new\(index)" + (ending.isEmpty ? "\n" : ending), content + ending]
        }
    }

    /// What one side makes of `lines` with `edits` (line index → edit), named with `tag`.
    private static func apply(_ edits: [Int: Edit], to lines: [(String, String)], tag: String) -> String {
        lines.enumerated().flatMap { render($0.offset, $0.element, edits[$0.offset], tag: tag) }.joined()
    }

    @Test("edits separated by an unchanged line always merge into both sides' edits", arguments: 0..<300)
    func separatedEditsMerge(_ seed: Int) {
        var random = SplitMix64(seed: UInt64(seed))
        let count = Int.random(in: 0...24, using: &random)
        let lines: [(String, String)] = (0..<count).map { index in
            let ending = index == count - 1 && Bool.random(using: &random) ? "" : (Bool.random(using: &random) ? "\n" : "\r\n")
            return ("L\(index)", ending)
        }
        var ours: [Int: Edit] = [:], theirs: [Int: Edit] = [:]
        var previousOwner = 0  // 0: unchanged, 1: ours, 2: theirs
        for index in 0..<count {
            var owner = [0, 0, 1, 2].randomElement(using: &random) ?? 0
            if owner != 0, previousOwner != 0, owner != previousOwner { owner = 0 }
            let edit = [Edit.replace, .delete, .insertBefore].randomElement(using: &random) ?? .replace
            if owner == 1 { ours[index] = edit } else if owner == 2 { theirs[index] = edit }
            previousOwner = owner
        }
        let base = lines.map { $0.0 + $0.1 }.joined()
        let oursText = Self.apply(ours, to: lines, tag: "O")
        let theirsText = Self.apply(theirs, to: lines, tag: "T")
        // Both sides' edits, each on the lines it touched.
        let expected = lines.enumerated().flatMap { index, line in
            ours[index] != nil ? Self.render(index, line, ours[index], tag: "O")
                : Self.render(index, line, theirs[index], tag: "T")
        }.joined()
        let result = TextMerge.merge(base: base, ours: oursText, theirs: theirsText)
        #expect(result == .merged(expected),
                "base \(base.debugDescription) ours \(oursText.debugDescription) theirs \(theirsText.debugDescription)")
        #expect(TextMerge.merge(base: base, ours: theirsText, theirs: oursText) == result)
    }

    @Test("the same line replaced differently on both sides is a conflict", arguments: 0..<100)
    func sameLineConflicts(_ seed: Int) {
        var random = SplitMix64(seed: UInt64(seed))
        let count = Int.random(in: 1...20, using: &random)
        let lines = (0..<count).map { ("L\($0)", "\n") }
        let target = Int.random(in: 0..<count, using: &random)
        let base = lines.map { $0.0 + $0.1 }.joined()
        let ours = Self.apply([target: .replace], to: lines, tag: "O")
        let theirs = Self.apply([target: .replace], to: lines, tag: "T")
        #expect(TextMerge.merge(base: base, ours: ours, theirs: theirs) == .conflict(baseLines: target..<(target + 1)))
    }
}

@Suite("TextMerge: leaving the shared start out of the diff")
struct TextMergeSharedStartTests {
    /// The untrimmed line merge, with its "too many differences" answer named as `merge` names it.
    private static func untrimmed(_ base: [UInt8], _ ours: [UInt8], _ theirs: [UInt8]) -> TextMerge.MergeResult {
        switch TextMerge.mergeLines(base: .init(base), ours: .init(ours), theirs: .init(theirs)) {
        case .conflict(let lines) where lines.upperBound == Int.max: return .conflict(baseLines: 0..<TextMerge.Lines(base).count)
        case let result: return result
        }
    }

    /// A text of `count` lines drawn from a few (so lines repeat), with mixed endings and maybe
    /// no final one.
    private static func text(_ count: Int, _ random: inout SplitMix64) -> [UInt8] {
        var bytes: [UInt8] = []
        for index in 0..<count {
            bytes += Array(["a", "b", "c", "dd", ""].randomElement(using: &random)!.utf8)
            if index < count - 1 || Bool.random(using: &random) {
                bytes += Array((Bool.random(using: &random) ? "\n" : "\r\n").utf8)
            }
        }
        return bytes
    }

    @Test("the result is the untrimmed merge's, whatever the texts", arguments: 0..<400)
    func sameAsUntrimmed(_ seed: Int) {
        var random = SplitMix64(seed: UInt64(seed))
        let shared = Self.text(Int.random(in: 0...6, using: &random), &random)
        // A shared start ending in a line feed or not, then three different tails.
        let base = shared + Self.text(Int.random(in: 0...5, using: &random), &random)
        let ours = shared + Self.text(Int.random(in: 0...5, using: &random), &random)
        let theirs = shared + Self.text(Int.random(in: 0...5, using: &random), &random)
        #expect(TextMerge.mergeLinesAfterSharedStart(base: base, ours: ours, theirs: theirs) == Self.untrimmed(base, ours, theirs),
                "base \(String(decoding: base, as: UTF8.self).debugDescription) ours \(String(decoding: ours, as: UTF8.self).debugDescription) theirs \(String(decoding: theirs, as: UTF8.self).debugDescription)")
    }

    @Test("a long text edited at its end on both sides diffs only the end")
    func longTextAppends() {
        let base = (0..<20_000).map { "line \($0)\n" }.joined()
        let kept = String(base.dropLast("line 19999\n".count))
        let ours = base + "ours\n", theirs = kept + "theirs\n"  // theirs replaced the last line
        let result = TextMerge.merge(base: base, ours: ours, theirs: theirs)
        #expect(result == .conflict(baseLines: 19_999..<20_000))  // next to ours' append: adjacent edits
        #expect(TextMerge.merge(base: base, ours: ours, theirs: kept + "line 19999\n" + "theirs\n")
                == .merged(base + "ours\n" + "theirs\n"))
        let edited = kept.replacingOccurrences(of: "line 5\n", with: "five\n") + "line 19999\n"
        #expect(TextMerge.merge(base: base, ours: ours, theirs: edited) == .merged(edited + "ours\n"))
        #expect(result == TextMerge.mergeLinesAfterSharedStart(base: Array(base.utf8), ours: Array(ours.utf8), theirs: Array(theirs.utf8)))
    }
}

@Suite("TextMerge: appends merged on the bytes")
struct TextMergeAppendsTests {
    /// A few lines drawn from a small set, with mixed endings and maybe no final one.
    private static func lines(_ count: Int, _ random: inout SplitMix64) -> String {
        var text = ""
        for index in 0..<count {
            text += ["a", "b", "é", "dd", ""].randomElement(using: &random)!
            if index < count - 1 || Bool.random(using: &random) { text += Bool.random(using: &random) ? "\n" : "\r\n" }
        }
        return text
    }

    @Test("where it answers, it gives the general merge's bytes; it answers whenever both sides only appended to a base that ends a line",
          arguments: 0..<500)
    func sameAsGeneralMerge(_ seed: Int) {
        var random = SplitMix64(seed: UInt64(seed))
        let base = Self.lines(Int.random(in: 0...4, using: &random), &random)
        // Mostly appends to the base; sometimes a side that changed it.
        func side() -> String {
            Int.random(in: 0..<5, using: &random) == 0
                ? Self.lines(Int.random(in: 0...5, using: &random), &random)
                : base + Self.lines(Int.random(in: 0...3, using: &random), &random)
        }
        let ours = side(), theirs = side()
        let fast = TextMerge.mergeAppends(base: Data(base.utf8), ours: Data(ours.utf8), theirs: Data(theirs.utf8))
        let appendsOnly = ours.utf8.starts(with: base.utf8) && theirs.utf8.starts(with: base.utf8)
            && (base.isEmpty || base.utf8.last == UInt8(ascii: "\n"))
        #expect((fast != nil) == appendsOnly, "base \(base.debugDescription) ours \(ours.debugDescription) theirs \(theirs.debugDescription)")
        if let fast {
            #expect(TextMerge.merge(base: base, ours: ours, theirs: theirs) == .merged(String(decoding: fast, as: UTF8.self)),
                    "base \(base.debugDescription) ours \(ours.debugDescription) theirs \(theirs.debugDescription)")
        }
    }

    @Test("a byte-order mark is compared as bytes: a base of the mark alone is not an empty text")
    func byteOrderMark() {
        let mark = Data([0xEF, 0xBB, 0xBF])
        #expect(TextMerge.mergeAppends(base: mark, ours: mark + Data("a\n".utf8), theirs: mark + Data("b\n".utf8)) == nil)
        let base = mark + Data("x\n".utf8)
        #expect(TextMerge.mergeAppends(base: base, ours: base + Data("a".utf8), theirs: base + Data("b\r\n".utf8))
                == base + Data("a\nb\r\n".utf8))
    }
}
