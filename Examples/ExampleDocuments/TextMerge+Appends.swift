import Foundation

extension TextMerge {
    /// ``merge(base:ours:theirs:)`` for the common case of two programs appending lines, on the
    /// encoded bytes: when `ours` and `theirs` both start with all of `base`, and `base` is empty
    /// or ends with a line feed, the result is the bytes `merge` would give for the decoded texts
    /// (`ours`, then the lines `theirs` appended, with a line ending between them when `ours`
    /// ends without one) — found by comparing and copying bytes, without decoding, splitting or
    /// diffing anything. `nil` in every other case: then use `merge`.
    ///
    /// The bytes are compared as they are (a leading byte-order mark included, which is never a
    /// line feed: a `base` of a mark alone is not "empty" here, and gets `nil`). The result is
    /// valid UTF-8 when all three are; `theirs`' appended bytes are not checked: the caller
    /// decodes the result.
    public static func mergeAppends(base: Data, ours: Data, theirs: Data) -> Data? {
        guard base.isEmpty || base.last == UInt8(ascii: "\n"),
              hasPrefix(ours, base), hasPrefix(theirs, base) else { return nil }
        let oursTail = ours.dropFirst(base.count), theirsTail = theirs.dropFirst(base.count)
        // `merge`'s order of cases: the same appends, or none by one side.
        if theirsTail.isEmpty || sameBytes(oursTail, theirsTail) { return ours }
        if oursTail.isEmpty { return theirs }
        var result = Data(capacity: ours.count + 2 + theirsTail.count)
        result.append(ours)
        if oursTail.last != UInt8(ascii: "\n") {
            result.append(contentsOf: lastLineEnding(in: oursTail) ?? lastLineEnding(in: base[...]) ?? [UInt8(ascii: "\n")])
        }
        result.append(theirsTail)
        return result
    }

    /// Whether `data` starts with the bytes of `prefix` (`memcmp`).
    private static func hasPrefix(_ data: Data, _ prefix: Data) -> Bool {
        guard data.count >= prefix.count else { return false }
        guard !prefix.isEmpty else { return true }
        return data.withUnsafeBytes { data in
            prefix.withUnsafeBytes { prefix in memcmp(data.baseAddress!, prefix.baseAddress!, prefix.count) == 0 }
        }
    }

    /// Whether `a` and `b` hold the same bytes (`memcmp`).
    private static func sameBytes(_ a: Data, _ b: Data) -> Bool {
        guard a.count == b.count else { return false }
        guard !a.isEmpty else { return true }
        return a.withUnsafeBytes { a in b.withUnsafeBytes { b in memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 } }
    }
}
