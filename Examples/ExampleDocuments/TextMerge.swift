/// A line-based three-way merge of texts: the edits two sides made to a common base are combined
/// when they touch different lines, and reported as a conflict when they do not.
///
/// ## Rules
/// - A **line** is everything up to and including a line feed (`\n`); the last line may have
///   none. A `\r` before the `\n` belongs to the line, so CRLF and LF endings are kept byte for
///   byte, and a line whose ending changed from LF to CRLF counts as changed. A lone `\r` is an
///   ordinary character.
/// - Each side's edits are found by a shortest line diff (Myers) against `base`.
/// - Edits of the two sides are combined when they are separated by at least one line both left
///   unchanged. Edits to the same lines, to **adjacent** lines, or insertions at the same place
///   conflict — except:
///   - both sides made the same edit: it is taken once;
///   - both sides only **appended** at the end of the text: the result is `base`, then the lines
///     `ours` appended, then the lines `theirs` appended (always in that order). When `base`
///     ends without a line ending, both sides must have completed its last line with the same
///     ending (otherwise they edited the same line: a conflict); when the lines of `ours` end
///     without one, one is added before the lines of `theirs` (the last ending `ours` used, else
///     `base`'s last, else `\n`).
/// - `ours == theirs`, or one side equal to `base`: the other side is the result.
/// - A side that differs from `base` in more than ``maximumDifferences`` lines (not counting the
///   lines both share at the beginning and the end) is not diffed: the result is a conflict over
///   the whole of `base`, rather than quadratic time and memory.
///
/// The function is pure: no I/O, deterministic, safe from any thread.
public enum TextMerge {
    /// What ``merge(base:ours:theirs:)`` decided.
    public enum MergeResult: Equatable, Sendable {
        /// The edits do not overlap: the merged text.
        case merged(String)
        /// The edits overlap: `baseLines` is the first overlapping region, as 0-based line
        /// numbers of `base` (an empty range for insertions at the same place).
        case conflict(baseLines: Range<Int>)
    }

    /// The most lines one side may add and remove (together) for the merge to diff it: 2,000
    /// (the diff then needs at most about 32 MB).
    public static let maximumDifferences = 2_000

    /// Merges the edits `ours` and `theirs` made to `base` (see ``TextMerge`` for the rules).
    public static func merge(base: String, ours: String, theirs: String) -> MergeResult {
        let baseBytes = Array(base.utf8), oursBytes = Array(ours.utf8), theirsBytes = Array(theirs.utf8)
        if oursBytes == theirsBytes || theirsBytes == baseBytes { return .merged(ours) }
        if oursBytes == baseBytes { return .merged(theirs) }
        if oursBytes.starts(with: baseBytes), theirsBytes.starts(with: baseBytes),
           let appended = appendBoth(base: baseBytes, ours: oursBytes[baseBytes.count...],
                                     theirs: theirsBytes[baseBytes.count...]) {
            return .merged(text(appended))
        }
        return mergeLinesAfterSharedStart(base: baseBytes, ours: oursBytes, theirs: theirsBytes)
    }

    /// ``mergeLines(base:ours:theirs:)`` of the three texts, with the lines all three share at the
    /// beginning left out of the diff (an append to a long text then diffs a few lines, not all
    /// of them) and put back in front. The result is the same: the diff finds those lines equal
    /// as its first step (`LineDiff.hunks` trims the shared start of each pair, which begins with
    /// these lines), and the conflict lines are counted from the start of `base`.
    static func mergeLinesAfterSharedStart(base: [UInt8], ours: [UInt8], theirs: [UInt8]) -> MergeResult {
        let shared = sharedLeadingBytes(base, ours, theirs)
        let sharedLines = base[..<shared].reduce(0) { $1 == newline ? $0 + 1 : $0 }
        switch mergeLines(base: Lines(Array(base[shared...])), ours: Lines(Array(ours[shared...])),
                          theirs: Lines(Array(theirs[shared...]))) {
        case .merged(let rest): return .merged(text(Array(base[..<shared])) + rest)
        case .conflict(let lines) where lines.upperBound == Int.max:
            return .conflict(baseLines: 0..<Lines(base).count)  // too many differences: the whole base
        case .conflict(let lines): return .conflict(baseLines: (lines.lowerBound + sharedLines)..<(lines.upperBound + sharedLines))
        }
    }

    /// How many bytes, ending with a line feed, begin all three texts alike (0 when not even
    /// their first line is shared): whole lines, so the texts after them are texts of lines.
    static func sharedLeadingBytes(_ a: [UInt8], _ b: [UInt8], _ c: [UInt8]) -> Int {
        a.withUnsafeBufferPointer { a in
            b.withUnsafeBufferPointer { b in
                c.withUnsafeBufferPointer { c in
                    let limit = min(a.count, b.count, c.count)
                    var lineEnd = 0
                    var index = 0
                    while index < limit, a[index] == b[index], a[index] == c[index] {
                        if a[index] == newline { lineEnd = index + 1 }
                        index += 1
                    }
                    return lineEnd
                }
            }
        }
    }

    // MARK: Lines

    /// The lines of a text, as ranges of its bytes.
    struct Lines {
        let bytes: [UInt8]
        let ranges: [Range<Int>]

        init(_ bytes: [UInt8]) {
            self.bytes = bytes
            var ranges: [Range<Int>] = []
            var start = 0
            for index in bytes.indices where bytes[index] == newline {
                ranges.append(start..<(index + 1))
                start = index + 1
            }
            if start < bytes.count { ranges.append(start..<bytes.count) }
            self.ranges = ranges
        }

        var count: Int { ranges.count }
        subscript(line: Int) -> ArraySlice<UInt8> { bytes[ranges[line]] }

        /// The bytes of `lines`.
        func bytes(of lines: Range<Int>) -> ArraySlice<UInt8> {
            guard let first = lines.first, let last = lines.last else { return [] }
            return bytes[ranges[first].lowerBound..<ranges[last].upperBound]
        }
    }

    private static let newline = UInt8(ascii: "\n")
    private static let carriageReturn = UInt8(ascii: "\r")

    private static func text(_ bytes: [UInt8]) -> String {
        // Cut only at line feeds of valid UTF-8: the result is valid UTF-8.
        String(decoding: bytes, as: UTF8.self)
    }

    // MARK: Merging

    /// One side's edit: `base` lines replaced by `side` lines.
    struct Hunk {
        var base: Range<Int>
        var side: Range<Int>
        var isOurs: Bool
    }

    /// The line merge of three texts; a side with too many differences gives a conflict over
    /// `0..<Int.max` (the caller names the whole base).
    static func mergeLines(base: Lines, ours: Lines, theirs: Lines) -> MergeResult {
        let ids = LineIdentifiers()
        let baseIDs = ids.identify(base), oursIDs = ids.identify(ours), theirsIDs = ids.identify(theirs)
        guard let oursHunks = LineDiff.hunks(baseIDs, oursIDs, maximumDifferences: maximumDifferences),
              let theirsHunks = LineDiff.hunks(baseIDs, theirsIDs, maximumDifferences: maximumDifferences) else {
            return .conflict(baseLines: 0..<Int.max)
        }
        let hunks = (oursHunks.map { Hunk(base: $0.0, side: $0.1, isOurs: true) }
            + theirsHunks.map { Hunk(base: $0.0, side: $0.1, isOurs: false) })
            .sorted { ($0.base.lowerBound, $0.base.upperBound) < ($1.base.lowerBound, $1.base.upperBound) }

        var result: [UInt8] = []
        var cursor = 0
        var index = 0
        while index < hunks.count {
            // A cluster: hunks whose base ranges overlap or touch.
            var cluster = [hunks[index]]
            var end = hunks[index].base.upperBound
            index += 1
            while index < hunks.count, hunks[index].base.lowerBound <= end {
                end = max(end, hunks[index].base.upperBound)
                cluster.append(hunks[index])
                index += 1
            }
            let start = cluster[0].base.lowerBound
            result += base.bytes(of: cursor..<start)
            let oursRegion = region(of: ours, cluster.filter(\.isOurs), base: base, start..<end)
            let theirsRegion = region(of: theirs, cluster.filter { !$0.isOurs }, base: base, start..<end)
            if !cluster.contains(where: { !$0.isOurs }) || oursRegion == theirsRegion {
                result += oursRegion
            } else if !cluster.contains(where: \.isOurs) {
                result += theirsRegion
            } else if end == base.count, let appended = appendedRegions(base.bytes(of: start..<end), oursRegion, theirsRegion) {
                result += appended
            } else {
                return .conflict(baseLines: start..<end)
            }
            cursor = end
        }
        result += base.bytes(of: cursor..<base.count)
        return .merged(text(result))
    }

    /// What `side` made of the base lines `lines`, given its hunks inside them.
    private static func region(of side: Lines, _ hunks: [Hunk], base: Lines, _ lines: Range<Int>) -> [UInt8] {
        var bytes: [UInt8] = []
        var cursor = lines.lowerBound
        for hunk in hunks {
            bytes += base.bytes(of: cursor..<hunk.base.lowerBound)
            bytes += side.bytes(of: hunk.side)
            cursor = hunk.base.upperBound
        }
        bytes += base.bytes(of: cursor..<lines.upperBound)
        return bytes
    }

    /// Both sides' versions of the base region at the end of the text, merged when both only
    /// appended to it; `nil` otherwise.
    private static func appendedRegions(_ base: ArraySlice<UInt8>, _ ours: [UInt8], _ theirs: [UInt8]) -> [UInt8]? {
        guard ours.starts(with: base), theirs.starts(with: base) else { return nil }
        return appendBoth(base: Array(base), ours: ours[base.count...], theirs: theirs[base.count...])
    }

    /// `base` followed by what both sides appended (ours first), or `nil` when they did not only
    /// append whole lines (see the rules on ``TextMerge``).
    private static func appendBoth(base: [UInt8], ours: ArraySlice<UInt8>, theirs: ArraySlice<UInt8>) -> [UInt8]? {
        if ours.elementsEqual(theirs) || theirs.isEmpty { return base + ours }
        if ours.isEmpty { return base + theirs }
        var result = base
        var ours = ours, theirs = theirs
        if let last = base.last, last != newline {
            // Both must complete the base's last line, with the same ending.
            guard let completion = leadingLineEnding(ours), theirs.starts(with: completion) else { return nil }
            result += completion
            ours = ours.dropFirst(completion.count)
            theirs = theirs.dropFirst(completion.count)
            if ours.elementsEqual(theirs) || theirs.isEmpty { return result + ours }
            if ours.isEmpty { return result + theirs }
        }
        result += ours
        if ours.last != newline {
            result += lastLineEnding(in: ours) ?? lastLineEnding(in: base[...]) ?? [newline]
        }
        return result + theirs
    }

    /// The line ending `bytes` start with (`\r\n` or `\n`), if any.
    private static func leadingLineEnding(_ bytes: ArraySlice<UInt8>) -> [UInt8]? {
        if bytes.starts(with: [carriageReturn, newline]) { return [carriageReturn, newline] }
        if bytes.first == newline { return [newline] }
        return nil
    }

    /// The last line ending in `bytes` (`\r\n` or `\n`), if any.
    static func lastLineEnding<Bytes: BidirectionalCollection<UInt8>>(in bytes: Bytes) -> [UInt8]? where Bytes.Index == Int {
        guard let index = bytes.lastIndex(of: newline) else { return nil }
        return index > bytes.startIndex && bytes[index - 1] == carriageReturn ? [carriageReturn, newline] : [newline]
    }
}

/// Numbers equal lines equally (across the three texts), so the diff compares integers.
private final class LineIdentifiers {
    private var numbers: [ArraySlice<UInt8>: Int] = [:]

    func identify(_ lines: TextMerge.Lines) -> [Int] {
        (0..<lines.count).map { line in
            let bytes = lines[line]
            if let number = numbers[bytes] { return number }
            let number = numbers.count
            numbers[bytes] = number
            return number
        }
    }
}

/// A shortest edit script between two sequences (Myers' O((N+M)·D) algorithm), as hunks.
enum LineDiff {
    /// The ranges of `a` replaced by ranges of `b`, in order, each separated from the next by at
    /// least one equal element; `nil` when more than `maximumDifferences` elements differ.
    static func hunks(_ a: [Int], _ b: [Int], maximumDifferences: Int = .max) -> [(Range<Int>, Range<Int>)]? {
        var prefix = 0
        while prefix < a.count, prefix < b.count, a[prefix] == b[prefix] { prefix += 1 }
        var suffix = 0
        while suffix < a.count - prefix, suffix < b.count - prefix,
              a[a.count - 1 - suffix] == b[b.count - 1 - suffix] { suffix += 1 }
        let middleA = Array(a[prefix..<(a.count - suffix)]), middleB = Array(b[prefix..<(b.count - suffix)])
        var hunks: [(Range<Int>, Range<Int>)] = []
        var previous = (0, 0)
        guard let matched = matches(middleA, middleB, maximumDifferences: maximumDifferences) else { return nil }
        for match in matched + [(middleA.count, middleB.count)] {
            if match.0 > previous.0 || match.1 > previous.1 {
                hunks.append(((previous.0 + prefix)..<(match.0 + prefix), (previous.1 + prefix)..<(match.1 + prefix)))
            }
            previous = (match.0 + 1, match.1 + 1)
        }
        return hunks
    }

    /// The matched pairs `(i, j)` with `a[i] == b[j]` of a longest common subsequence, ascending;
    /// `nil` when more than `maximumDifferences` elements differ (time and memory grow with the
    /// square of that number).
    static func matches(_ a: [Int], _ b: [Int], maximumDifferences: Int = .max) -> [(Int, Int)]? {
        let n = a.count, m = b.count
        guard n > 0, m > 0 else { return n + m <= maximumDifferences ? [] : nil }
        let maximum = n + m
        var found = false
        let offset = maximum + 1
        var v = [Int](repeating: 0, count: 2 * maximum + 3)
        // trace[d][k + d]: the furthest x on diagonal k after step d.
        var trace: [[Int]] = []
        search: for d in 0...min(maximum, maximumDifferences) {
            var step = [Int](repeating: 0, count: 2 * d + 1)
            for k in stride(from: -d, through: d, by: 2) {
                var x = (k == -d || (k != d && v[offset + k - 1] < v[offset + k + 1]))
                    ? v[offset + k + 1] : v[offset + k - 1] + 1
                var y = x - k
                while x < n, y < m, a[x] == b[y] { x += 1; y += 1 }
                v[offset + k] = x
                step[k + d] = x
                if x >= n, y >= m {
                    trace.append(step)
                    found = true
                    break search
                }
            }
            trace.append(step)
        }
        guard found else { return nil }
        var result: [(Int, Int)] = []
        var x = n, y = m
        for d in stride(from: trace.count - 1, through: 0, by: -1) {
            let k = x - y
            var previousX = 0, previousY = 0
            if d > 0 {
                let before = trace[d - 1]
                func at(_ k: Int) -> Int { before[k + d - 1] }
                let previousK = (k == -d || (k != d && at(k - 1) < at(k + 1))) ? k + 1 : k - 1
                previousX = at(previousK)
                previousY = previousX - previousK
            }
            while x > previousX, y > previousY {
                x -= 1; y -= 1
                result.append((x, y))
            }
            x = previousX
            y = previousY
        }
        return result.reversed()
    }
}
