/// Line counts and line-ending kinds of a text, counted on its UTF-8 bytes.
///
/// Counted on bytes, not `Character`s: Swift treats `"\r\n"` as one `Character`, so a
/// `Character`-based `hasSuffix("\n")` is false for text ending in CRLF and that text's last line
/// was counted twice.
struct LineStatistics: Equatable {
    /// The number of lines: every line break ends one, and text after the last break is one more.
    /// Empty text has 0 lines; `"one\r\ntwo\r\n"` and `"one\ntwo"` have 2.
    let lines: Int
    /// Line breaks written as `"\r\n"`.
    let crlf: Int
    /// Line breaks written as a lone `"\n"`.
    let lf: Int

    init(_ text: String) {
        var crlf = 0, lf = 0
        var previous: UInt8 = 0
        var last: UInt8?
        for byte in text.utf8 {
            if byte == UInt8(ascii: "\n") {
                if previous == UInt8(ascii: "\r") { crlf += 1 } else { lf += 1 }
            }
            previous = byte
            last = byte
        }
        self.crlf = crlf
        self.lf = lf
        let breaks = crlf + lf
        switch last {
        case nil: lines = 0
        case UInt8(ascii: "\n"): lines = breaks
        default: lines = breaks + 1
        }
    }

    /// "none", "LF", "CRLF" or "mixed LF/CRLF".
    var endings: String {
        switch (lf, crlf) {
        case (0, 0): return "none"
        case (_, 0): return "LF"
        case (0, _): return "CRLF"
        default: return "mixed LF/CRLF"
        }
    }
}
