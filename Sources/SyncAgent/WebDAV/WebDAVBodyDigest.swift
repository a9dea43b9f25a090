import Foundation
import Glibc

/// A 128-bit digest of a server's `PROPFIND` answer, to tell that a folder's answer is the one of
/// the last poll without parsing it again (``RemoteListingToken``).
///
/// **The same XML, not the same bytes.** Apache writes the namespace declarations of each
/// `<D:response>` in the order of a hash table that changes from one request to the next, so two
/// answers about an unchanged folder differ in the order of those attributes. The digest therefore
/// reads start tags: the attributes of a tag are digested each on its own and combined by
/// addition, so their order does not count, and everything else (element names, text, the
/// values of the attributes) counts byte for byte. Comments, CDATA sections, processing
/// instructions and declarations are digested as they are. Answers with the same digest parse to
/// the same entries: XML gives attribute order no meaning. The length of the body is part of the
/// token too.
///
/// Not cryptographic, and it need not be: the server is the source of the listing either way (a
/// server that wanted to hide a change would simply not report it). What matters is that an
/// *accidental* change is never missed: each 8-byte word goes through two independent lanes of
/// xxHash64's round (`acc = rotl(acc + word × P2, 31) × P1`), a bijection of the lane for a
/// fixed word and of the word for a fixed lane — a change confined to one word (a tag's digit, a
/// date's second) always changes both lanes — and a change spread over several words collides
/// with a probability of about 2⁻¹²⁸.
///
/// Cost: a few milliseconds for a listing of 10,000 items (~5 MB), where parsing it costs hundreds.
enum WebDAVBodyDigest {
    /// The token of `body`.
    ///
    /// The body is digested as one run of bytes, broken only at start tags that carry
    /// attributes: such a tag's name goes with the run, its attributes are digested each on
    /// their own and added (order-free), and the run goes on after them. Tags without attributes
    /// (nearly all of a multistatus: `<D:href>`, `<lp1:getetag>`, end tags) stay in the run, so
    /// an answer costs about one pass of the word rounds over its bytes.
    static func token(of body: Data) -> RemoteListingToken {
        var digest = Lanes()
        body.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
            let bytes = raw.bindMemory(to: UInt8.self)
            var index = 0
            var chunkStart = 0
            while let open = find(UInt8(ascii: "<"), in: bytes, from: index) {
                guard open + 1 < bytes.count else { break }
                let next = bytes[open + 1]
                if next == UInt8(ascii: "/") {
                    // An end tag: no attributes, no `<` inside; part of the run as it is.
                    index = open + 2
                    continue
                }
                if next == UInt8(ascii: "?") {
                    // A processing instruction: part of the run as it is, to its end.
                    index = (find(UInt8(ascii: ">"), in: bytes, from: open + 1) ?? bytes.count - 1) + 1
                    continue
                }
                if next == UInt8(ascii: "!") {
                    // A comment, a CDATA section or a declaration: part of the run, to its true end.
                    let terminator = starts(bytes, at: open, with: Self.commentStart) ? Self.commentEnd
                        : starts(bytes, at: open, with: Self.cdataStart) ? Self.cdataEnd : Self.tagEnd
                    index = (find(terminator, in: bytes, from: open + 2) ?? bytes.count - terminator.count) + terminator.count
                    continue
                }
                // A start tag: its name.
                var cursor = open + 1
                while cursor < bytes.count, !isSpace(bytes[cursor]), bytes[cursor] != UInt8(ascii: ">"), bytes[cursor] != UInt8(ascii: "/") {
                    cursor += 1
                }
                guard cursor < bytes.count, isSpace(bytes[cursor]) else {
                    // No attributes: the tag stays in the run.
                    index = cursor
                    continue
                }
                // Attributes may follow: the run up to the end of the name, then the attributes.
                digest.feed(UnsafeBufferPointer(rebasing: bytes[chunkStart..<cursor]))
                var sumHigh: UInt64 = 0, sumLow: UInt64 = 0, attributes: UInt64 = 0
                while true {
                    while cursor < bytes.count, isSpace(bytes[cursor]) { cursor += 1 }
                    guard cursor < bytes.count, bytes[cursor] != UInt8(ascii: ">"), bytes[cursor] != UInt8(ascii: "/") else { break }
                    // One attribute: its name, `=`, and the quoted value (which may hold `>`).
                    let start = cursor
                    while cursor < bytes.count, bytes[cursor] != UInt8(ascii: "\""), bytes[cursor] != UInt8(ascii: "'"),
                          bytes[cursor] != UInt8(ascii: ">") {
                        cursor += 1
                    }
                    guard cursor < bytes.count, bytes[cursor] != UInt8(ascii: ">") else {
                        cursor = start  // not well-formed: the rest of the tag as it is
                        break
                    }
                    let quote = bytes[cursor]
                    cursor = (find(quote, in: bytes, from: cursor + 1) ?? bytes.count - 1) + 1
                    var attribute = Lanes()
                    attribute.feed(UnsafeBufferPointer(rebasing: bytes[start..<cursor]))
                    let (high, low) = attribute.finish()
                    sumHigh &+= high
                    sumLow &+= low
                    attributes += 1
                }
                digest.feed(word: sumHigh)
                digest.feed(word: sumLow)
                digest.feed(word: attributes)
                chunkStart = min(cursor, bytes.count)
                index = chunkStart
            }
            digest.feed(UnsafeBufferPointer(rebasing: bytes[min(chunkStart, bytes.count)...]))
        }
        let (high, low) = digest.finish()
        return RemoteListingToken(high: high, low: low, length: body.count)
    }

    private static let commentStart = Array("<!--".utf8), commentEnd = Array("-->".utf8)
    private static let cdataStart = Array("<![CDATA[".utf8), cdataEnd = Array("]]>".utf8)
    private static let tagEnd = Array(">".utf8)

    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    private static func find(_ byte: UInt8, in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        guard start < bytes.count, let base = bytes.baseAddress else { return nil }
        guard let found = memchr(base + start, Int32(byte), bytes.count - start) else { return nil }
        return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
    }

    private static func find(_ pattern: [UInt8], in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        guard let first = pattern.first else { return start }
        var index = start
        while let candidate = find(first, in: bytes, from: index) {
            if candidate + pattern.count <= bytes.count, pattern.indices.allSatisfy({ bytes[candidate + $0] == pattern[$0] }) {
                return candidate
            }
            index = candidate + 1
        }
        return nil
    }

    private static func starts(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int, with pattern: [UInt8]) -> Bool {
        guard index + pattern.count <= bytes.count else { return false }
        return pattern.indices.allSatisfy { bytes[index + $0] == pattern[$0] }
    }

    /// Two xxHash64 lanes fed 8 bytes at a time (a partial word waits for the next bytes).
    struct Lanes {
        private static let prime1: UInt64 = 0x9E37_79B1_85EB_CA87
        private static let prime2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
        private static let prime3: UInt64 = 0x1656_67B1_9E37_79F9
        private static let prime4: UInt64 = 0x85EB_CA77_C2B2_AE63

        private var first: UInt64 = 0x6A09_E667_F3BC_C908
        private var second: UInt64 = 0xBB67_AE85_84CA_A73B
        private var pending: UInt64 = 0
        private var pendingCount: UInt64 = 0
        private var total: UInt64 = 0

        mutating func feed(word: UInt64) {
            first = Self.round(first, word, Self.prime2, Self.prime1)
            second = Self.round(second, word, Self.prime4, Self.prime3)
        }

        mutating func feed(_ bytes: UnsafeBufferPointer<UInt8>) {
            total &+= UInt64(bytes.count)
            var index = 0
            while pendingCount != 0, index < bytes.count { take(bytes[index]); index += 1 }
            if let base = bytes.baseAddress {
                let raw = UnsafeRawPointer(base)
                while index + 8 <= bytes.count {
                    feed(word: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)))
                    index += 8
                }
            }
            while index < bytes.count { take(bytes[index]); index += 1 }
        }

        private mutating func take(_ byte: UInt8) {
            pending |= UInt64(byte) << (pendingCount * 8)
            pendingCount += 1
            if pendingCount == 8 {
                feed(word: pending)
                pending = 0
                pendingCount = 0
            }
        }

        /// The two lanes, mixed, after the pending bytes and the count of bytes fed.
        func finish() -> (UInt64, UInt64) {
            var copy = self
            if copy.pendingCount != 0 { copy.feed(word: copy.pending) }
            copy.feed(word: total)
            return (Self.avalanche(copy.first), Self.avalanche(copy.second))
        }

        private static func round(_ lane: UInt64, _ word: UInt64, _ multiplier: UInt64, _ finish: UInt64) -> UInt64 {
            let mixed = lane &+ word &* multiplier
            return ((mixed << 31) | (mixed >> 33)) &* finish
        }

        /// xxHash64's final mix (a bijection: spreads every bit over the whole word).
        private static func avalanche(_ value: UInt64) -> UInt64 {
            var hash = value
            hash ^= hash >> 33
            hash &*= prime2
            hash ^= hash >> 29
            hash &*= prime3
            hash ^= hash >> 32
            return hash
        }
    }
}
