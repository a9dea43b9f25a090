/// The primitive encoding of the remote-presenter wire format (see Docs/RemotePresenters.md,
/// *The wire format*): fixed-size little-endian integers and length-prefixed byte strings.
///
/// `WireWriter` appends; `WireReader` reads from a frame body and throws
/// `RemoteCodecError.malformed` on anything that does not fit — a length past the end, a string
/// that is not UTF-8, a value out of range. It never traps and never allocates more than the
/// bytes it was given.
struct WireWriter {
    private(set) var bytes: [UInt8] = []

    init() {}

    mutating func u8(_ value: UInt8) { bytes.append(value) }

    mutating func bool(_ value: Bool) { bytes.append(value ? 1 : 0) }

    mutating func u32(_ value: UInt32) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func u64(_ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func i64(_ value: Int64) { u64(UInt64(bitPattern: value)) }

    /// A byte string of at most `limit` bytes: its length (UInt32), then the bytes.
    mutating func blob(_ value: [UInt8], limit: Int) throws(RemoteCodecError) {
        guard value.count <= limit else { throw .tooLarge("a field of \(value.count) bytes (at most \(limit))") }
        u32(UInt32(value.count))
        bytes.append(contentsOf: value)
    }

    /// Text as UTF-8, of at most `limit` bytes.
    mutating func text(_ value: String, limit: Int) throws(RemoteCodecError) {
        try blob(Array(value.utf8), limit: limit)
    }

    /// An optional value: a presence byte, then the value.
    mutating func optional<T>(_ value: T?, _ write: (inout WireWriter, T) throws(RemoteCodecError) -> Void) throws(RemoteCodecError) {
        guard let value else { return u8(0) }
        u8(1)
        try write(&self, value)
    }
}

struct WireReader {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { offset == bytes.count }
    private var remaining: Int { bytes.count - offset }

    mutating func u8() throws(RemoteCodecError) -> UInt8 {
        guard remaining >= 1 else { throw .malformed("the frame ends early") }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func bool() throws(RemoteCodecError) -> Bool {
        switch try u8() {
        case 0: return false
        case 1: return true
        case let other: throw .malformed("\(other) is not a boolean")
        }
    }

    mutating func u32() throws(RemoteCodecError) -> UInt32 {
        guard remaining >= 4 else { throw .malformed("the frame ends early") }
        var value: UInt32 = 0
        for index in 0..<4 { value |= UInt32(bytes[offset + index]) << (8 * UInt32(index)) }
        offset += 4
        return value
    }

    mutating func u64() throws(RemoteCodecError) -> UInt64 {
        guard remaining >= 8 else { throw .malformed("the frame ends early") }
        var value: UInt64 = 0
        for index in 0..<8 { value |= UInt64(bytes[offset + index]) << (8 * UInt64(index)) }
        offset += 8
        return value
    }

    mutating func i64() throws(RemoteCodecError) -> Int64 { Int64(bitPattern: try u64()) }

    /// A byte string of at most `limit` bytes.
    mutating func blob(limit: Int) throws(RemoteCodecError) -> ArraySlice<UInt8> {
        let length = Int(try u32())
        guard length <= limit else { throw .malformed("a field of \(length) bytes (at most \(limit))") }
        guard length <= remaining else { throw .malformed("a field runs past the end of the frame") }
        defer { offset += length }
        return bytes[offset..<(offset + length)]
    }

    /// UTF-8 text of at most `limit` bytes.
    mutating func text(limit: Int) throws(RemoteCodecError) -> String {
        let raw = try blob(limit: limit)
        guard let text = String(validating: raw, as: UTF8.self) else { throw .malformed("text that is not UTF-8") }
        return text
    }

    /// An optional value written by `WireWriter.optional`.
    mutating func optional<T>(_ read: (inout WireReader) throws(RemoteCodecError) -> T) throws(RemoteCodecError) -> T? {
        try bool() ? read(&self) : nil
    }

    /// Throws unless every byte was read: a frame with trailing bytes is malformed.
    func expectEnd() throws(RemoteCodecError) {
        guard isAtEnd else { throw .malformed("\(remaining) unexpected bytes at the end of the frame") }
    }
}

/// Why a frame could not be encoded or decoded.
enum RemoteCodecError: Error, Equatable, CustomStringConvertible {
    /// A received frame does not follow the format (the connection that sent it is closed).
    case malformed(String)
    /// A received frame's version is not one this process speaks.
    case unsupportedVersion(UInt8)
    /// A value to send does not fit the limits (nothing is sent).
    case tooLarge(String)

    var description: String {
        switch self {
        case .malformed(let reason): return "malformed frame: \(reason)"
        case .unsupportedVersion(let version): return "frame of unsupported version \(version)"
        case .tooLarge(let what): return "cannot send \(what)"
        }
    }
}
