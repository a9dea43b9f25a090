/// The head of an HTTP/1.x answer — status line and header fields — read from raw bytes.
///
/// Strict where it matters for framing and lenient elsewhere: the status line must be
/// `HTTP/1.x NNN …` with a three-digit status; a header line needs a token name and a colon with
/// no space before it; folded lines (obsolete) and more than ``maximumFields`` fields are refused;
/// lines may end with CRLF or a bare LF. Field names are lowercased; repeated fields are joined with
/// `, ` (as URLSession does). Bytes that are not UTF-8 become U+FFFD; nothing here can trap.
struct HTTPResponseHead: Equatable {
    let status: Int
    /// The minor version: 1 for `HTTP/1.1`, 0 for `HTTP/1.0`.
    let minorVersion: Int
    let headers: [String: String]

    /// The most header fields an answer may have.
    static let maximumFields = 256

    /// The value of field `name` (lowercase).
    func field(_ name: String) -> String? { headers[name] }

    /// The comma-separated tokens of field `name`, lowercased and trimmed.
    func tokens(_ name: String) -> [String] {
        (headers[name] ?? "").split(separator: ",").map { $0.trimmingHTTPWhitespace().lowercased() }.filter { !$0.isEmpty }
    }

    /// Parses the head at the start of `bytes`. Returns the head and how many bytes it took
    /// (through the empty line), or `nil` when the empty line has not arrived yet. Throws
    /// ``HTTPFailure/malformed(_:)`` for a head that is not HTTP.
    static func parse(_ bytes: UnsafeRawBufferPointer) throws(HTTPFailure) -> (head: HTTPResponseHead, length: Int)? {
        try checkStart(bytes)
        var lines: [Range<Int>] = []
        var lineStart = 0
        var index = 0
        var length: Int?
        while index < bytes.count {
            if bytes[index] == 0x0A {
                var lineEnd = index
                if lineEnd > lineStart && bytes[lineEnd - 1] == 0x0D { lineEnd -= 1 }
                if lineEnd == lineStart {
                    length = index + 1
                    break
                }
                lines.append(lineStart..<lineEnd)
                guard lines.count <= maximumFields + 1 else {
                    throw .malformed("the answer has more than \(maximumFields) header fields")
                }
                lineStart = index + 1
            }
            index += 1
        }
        guard let length, let statusLine = lines.first else { return nil }
        let (status, minor) = try parseStatusLine(string(bytes, statusLine))
        var headers: [String: String] = [:]
        for range in lines.dropFirst() {
            let line = string(bytes, range)
            guard let first = line.utf8.first, first != 0x20, first != 0x09 else {
                throw .malformed("a folded header line (obsolete, refused)")
            }
            guard let colon = line.firstIndex(of: ":") else { throw .malformed("a header line without a colon") }
            let name = line[..<colon]
            guard !name.isEmpty, name.utf8.allSatisfy(HTTPRequestHead.isTokenByte) else {
                throw .malformed("a header field name that is not a token")
            }
            let key = name.lowercased()
            let value = line[line.index(after: colon)...].trimmingHTTPWhitespace()
            if let existing = headers[key] { headers[key] = existing + ", " + value } else { headers[key] = String(value) }
        }
        return (HTTPResponseHead(status: status, minorVersion: minor, headers: headers), length)
    }

    /// Throws ``HTTPFailure/malformed(_:)`` unless `bytes` (an answer's first bytes, complete
    /// or not) can be the start of `HTTP/1.`: a garbage answer fails at once instead of when the
    /// buffer is full.
    static func checkStart(_ bytes: UnsafeRawBufferPointer) throws(HTTPFailure) {
        let prefix: [UInt8] = Array("HTTP/1.".utf8)
        for index in 0..<min(bytes.count, prefix.count) where bytes[index] != prefix[index] {
            throw .malformed("the answer does not start with an HTTP/1.x status line")
        }
    }

    /// The offset just past the empty line that ends a head in `bytes` (`\n\n` or `\n\r\n`),
    /// searching from `from` (so that a head arriving in pieces is scanned once), or `nil`.
    static func end(in bytes: UnsafeRawBufferPointer, from: Int) -> Int? {
        var index = max(0, from)
        while index < bytes.count {
            if bytes[index] == 0x0A {
                if index + 1 < bytes.count && bytes[index + 1] == 0x0A { return index + 2 }
                if index + 2 < bytes.count && bytes[index + 1] == 0x0D && bytes[index + 2] == 0x0A { return index + 3 }
            }
            index += 1
        }
        return nil
    }

    private static func string(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }

    /// `HTTP/1.1 207 Multi-Status` → (207, 1).
    private static func parseStatusLine(_ line: String) throws(HTTPFailure) -> (Int, Int) {
        let utf8 = Array(line.utf8)
        guard utf8.count >= 12, utf8[0..<7].elementsEqual("HTTP/1.".utf8), (0x30...0x39).contains(utf8[7]),
              utf8[8] == 0x20, utf8[9..<12].allSatisfy({ (0x30...0x39).contains($0) }),
              utf8.count == 12 || utf8[12] == 0x20 else {
            throw .malformed("not an HTTP/1.x status line")
        }
        let status = utf8[9..<12].reduce(0) { $0 * 10 + Int($1 - 0x30) }
        guard status >= 100 else { throw .malformed("status \(status) is not an HTTP status") }
        return (status, Int(utf8[7] - 0x30))
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs (HTTP's optional whitespace).
    func trimmingHTTPWhitespace() -> String {
        let utf8 = Array(self.utf8)
        var low = 0
        var high = utf8.count
        while low < high && (utf8[low] == 0x20 || utf8[low] == 0x09) { low += 1 }
        while high > low && (utf8[high - 1] == 0x20 || utf8[high - 1] == 0x09) { high -= 1 }
        return String(decoding: utf8[low..<high], as: UTF8.self)
    }
}
