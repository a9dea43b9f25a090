/// Decodes a `Transfer-Encoding: chunked` body incrementally (RFC 9112 §7.1): fed the bytes as
/// they arrive, it hands out the data of each chunk and stops after the last chunk and its
/// trailer fields. Chunk extensions and trailers are read and dropped.
///
/// Bounded: a size line or trailer line longer than ``maximumLineLength``, more than
/// ``maximumTrailerLines`` trailers, a size that is not hexadecimal or does not fit in 60 bits, or
/// a chunk not followed by CRLF is ``HTTPFailure/malformed(_:)``. Never traps.
struct HTTPChunkedDecoder {
    static let maximumLineLength = 4096
    static let maximumTrailerLines = 64

    private enum State {
        /// Reading a chunk-size line (with extensions); `length` bytes of it so far.
        case size(value: UInt64, digits: Int, inExtension: Bool, length: Int)
        /// Inside a chunk's data: `remaining` bytes to go.
        case data(remaining: UInt64)
        /// After a chunk's data: expecting CR (when `sawCR` false) then LF.
        case dataEnd(sawCR: Bool)
        /// Reading trailer lines after the last chunk; `length` bytes of the current one.
        case trailer(length: Int, lines: Int)
        case done
    }

    private var state = State.size(value: 0, digits: 0, inExtension: false, length: 0)

    /// Whether the last chunk and the trailer section were read.
    var isDone: Bool { if case .done = state { true } else { false } }

    /// Decodes from `input`, calling `deliver` with each piece of chunk data (it returns `false` to
    /// stop: then decoding ends at once). Returns how many bytes of `input` were used (fewer than
    /// all only when the body ended, or `deliver` stopped it).
    mutating func decode(_ input: UnsafeRawBufferPointer,
                         deliver: (UnsafeRawBufferPointer) -> Bool) throws(HTTPFailure) -> (used: Int, stopped: Bool) {
        var index = 0
        while index < input.count {
            switch state {
            case .done:
                return (index, false)
            case .data(let remaining):
                let count = Int(min(remaining, UInt64(input.count - index)))
                let piece = UnsafeRawBufferPointer(rebasing: input[index..<(index + count)])
                index += count
                let left = remaining - UInt64(count)
                state = left == 0 ? .dataEnd(sawCR: false) : .data(remaining: left)
                if !deliver(piece) { return (index, true) }
            case .dataEnd(let sawCR):
                let byte = input[index]
                index += 1
                if !sawCR && byte == 0x0D {
                    state = .dataEnd(sawCR: true)
                } else if byte == 0x0A {
                    state = .size(value: 0, digits: 0, inExtension: false, length: 0)
                } else {
                    throw .malformed("a chunk is not followed by CRLF")
                }
            case .size(var value, var digits, var inExtension, var length):
                let byte = input[index]
                index += 1
                length += 1
                guard length <= Self.maximumLineLength else { throw .malformed("a chunk-size line is too long") }
                if byte == 0x0A {
                    guard digits > 0 else { throw .malformed("a chunk-size line without a size") }
                    state = value == 0 ? .trailer(length: 0, lines: 0) : .data(remaining: value)
                    continue
                }
                if inExtension || byte == 0x0D {
                    // Extensions (and the CR before LF) are skipped.
                } else if byte == UInt8(ascii: ";") || byte == 0x20 || byte == 0x09 {
                    inExtension = true
                } else if let digit = Self.hexValue(byte) {
                    guard digits < 15 else { throw .malformed("a chunk size does not fit") }
                    value = value << 4 | UInt64(digit)
                    digits += 1
                } else {
                    throw .malformed("a chunk size is not hexadecimal")
                }
                state = .size(value: value, digits: digits, inExtension: inExtension, length: length)
            case .trailer(var length, var lines):
                let byte = input[index]
                index += 1
                if byte == 0x0A {
                    if length == 0 {
                        state = .done
                        return (index, false)
                    }
                    lines += 1
                    guard lines <= Self.maximumTrailerLines else { throw .malformed("too many trailer fields") }
                    length = 0
                } else if byte != 0x0D {
                    length += 1
                    guard length <= Self.maximumLineLength else { throw .malformed("a trailer line is too long") }
                }
                state = .trailer(length: length, lines: lines)
            }
        }
        return (index, false)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
