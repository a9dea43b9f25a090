import Foundation
import Glibc

/// Paths as the kernel sees them: bytes. A Linux file name may be any bytes but `/` and NUL, not
/// necessarily valid UTF-8, while Swift strings hold only valid Unicode. So that paths can still
/// travel as `String` (dictionary keys, lock-file names, messages) without losing a byte, the
/// code uses **lossless path strings**:
///
/// - a path whose bytes are valid UTF-8 is that string, unchanged (the usual case: no cost);
/// - each byte that is not part of valid UTF-8 becomes two scalars, U+0000 then the scalar with
///   the byte's value (U+0080…U+00FF). No real path contains NUL, so the form is unambiguous,
///   and `/` is never part of an escape, so splitting at `/` still finds the components.
///
/// At the system-call edge, ``withCString(_:_:)`` turns a lossless path string back into the exact
/// bytes. Never hand a lossless path string that may contain NUL directly to a C function (Swift
/// would cut it at the NUL). ``display(_:)`` gives the text for messages.
///
/// File URLs carry such bytes percent-encoded (`file:///d/a%FF.txt`): ``path(of:)`` decodes
/// `path(percentEncoded: true)` itself, as Foundation's `url.path` replaces them with U+FFFD (or
/// answers an empty string), and ``fileURL(_:isDirectory:)`` builds such a URL.
package enum PathBytes {
    /// The lossless path string of a file URL's path, made absolute against the working directory
    /// when it is relative. Not normalized (`.`, `..`, `//` and a trailing `/` are kept).
    package static func path(of url: URL) -> String {
        let encoded = url.path(percentEncoded: true)
        var bytes = percentDecoded(encoded)
        if bytes.first != UInt8(ascii: "/") {
            bytes = currentDirectory() + (bytes.isEmpty ? [] : [UInt8(ascii: "/")] + bytes)
        }
        return string(fromBytes: bytes)
    }

    /// A file URL for a lossless path string. Valid UTF-8 paths give the usual
    /// `URL(fileURLWithPath:isDirectory:)`; others a URL whose path holds the bytes percent-encoded.
    package static func fileURL(_ path: String, isDirectory: Bool = false) -> URL {
        guard path.utf8.contains(0) else { return URL(fileURLWithPath: path, isDirectory: isDirectory) }
        var encoded = "file://"
        for byte in bytes(of: path) { appendPercentEncoded(byte, to: &encoded) }
        if isDirectory && !encoded.hasSuffix("/") { encoded += "/" }
        return URL(string: encoded) ?? URL(fileURLWithPath: display(path), isDirectory: isDirectory)
    }

    /// The lossless path string for `bytes` (which contain no NUL).
    package static func string<Bytes: Collection>(fromBytes bytes: Bytes) -> String where Bytes.Element == UInt8 {
        if let valid = String(validating: bytes, as: UTF8.self) { return valid }
        let array = Array(bytes)
        var scalars = String.UnicodeScalarView()
        var index = 0
        while index < array.count {
            let lead = array[index]
            let length: Int
            switch lead {
            case 0x00...0x7F: length = 1
            case 0xC2...0xDF: length = 2
            case 0xE0...0xEF: length = 3
            case 0xF0...0xF4: length = 4
            default: length = 0
            }
            if length > 0, index + length <= array.count,
               let decoded = String(validating: array[index..<index + length], as: UTF8.self) {
                scalars.append(contentsOf: decoded.unicodeScalars)
                index += length
            } else {
                scalars.append(Unicode.Scalar(0))
                scalars.append(Unicode.Scalar(lead))
                index += 1
            }
        }
        return String(scalars)
    }

    /// The bytes a lossless path string stands for.
    package static func bytes(of path: String) -> [UInt8] {
        guard path.utf8.contains(0) else { return Array(path.utf8) }
        var result: [UInt8] = []
        result.reserveCapacity(path.utf8.count)
        var escaping = false
        for scalar in path.unicodeScalars {
            if escaping, scalar.value >= 0x80, scalar.value <= 0xFF {
                result.append(UInt8(scalar.value))
                escaping = false
                continue
            }
            escaping = false
            if scalar.value == 0 { escaping = true; continue }
            result.append(contentsOf: String(scalar).utf8)
        }
        return result
    }

    /// Calls `body` with the exact bytes of a lossless path string, NUL-terminated.
    @inline(__always)
    package static func withCString<R>(_ path: String, _ body: (UnsafePointer<CChar>) throws -> R) rethrows -> R {
        guard path.utf8.contains(0) else { return try path.withCString(body) }
        var bytes = bytes(of: path).map { CChar(bitPattern: $0) }
        bytes.append(0)
        return try body(bytes)  // the array's storage, valid for the call
    }

    /// Whether `a` and `b` hold the same bytes (Swift's `==` compares by canonical equivalence,
    /// so a composed and a decomposed "é" are equal strings but different file names).
    /// One `memcmp` over the UTF-8 of native strings.
    package static func haveSameBytes(_ a: String, _ b: String) -> Bool {
        var a = a, b = b
        return a.withUTF8 { left in
            b.withUTF8 { right in
                guard left.count == right.count else { return false }
                guard let l = left.baseAddress, let r = right.baseAddress else { return true }
                return memcmp(l, r, left.count) == 0
            }
        }
    }

    /// The text of a lossless path string for messages: bytes that are not UTF-8 shown as U+FFFD.
    package static func display(_ path: String) -> String {
        guard path.utf8.contains(0) else { return path }
        return String(decoding: bytes(of: path), as: UTF8.self)
    }

    /// `realpath(3)`: the absolute path with every symbolic link, `.` and `..` resolved as the
    /// kernel resolves them, or the error (for example ENOENT for a missing component or a
    /// dangling link). Both paths are lossless path strings.
    package static func realPath(_ path: String) -> Result<String, Errno> {
        let resolved = withCString(path) { cPath in pointerOrErrno { realpath(cPath, nil) } }
        return resolved.map { pointer in
            defer { free(pointer) }
            return string(fromBytes: UnsafeRawBufferPointer(start: pointer, count: strlen(pointer)))
        }
    }

    /// The working directory's bytes (`/` if it cannot be read).
    package static func currentDirectory() -> [UInt8] {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return [UInt8(ascii: "/")] }
        return buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }
    }

    private static func percentDecoded(_ encoded: String) -> [UInt8] {
        let utf8 = Array(encoded.utf8)
        guard utf8.contains(UInt8(ascii: "%")) else { return utf8 }
        var result: [UInt8] = []
        result.reserveCapacity(utf8.count)
        var index = 0
        while index < utf8.count {
            if utf8[index] == UInt8(ascii: "%"), index + 2 < utf8.count,
               let high = hexValue(utf8[index + 1]), let low = hexValue(utf8[index + 2]) {
                result.append(high << 4 | low)
                index += 3
            } else {
                result.append(utf8[index])
                index += 1
            }
        }
        return result
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    private static func appendPercentEncoded(_ byte: UInt8, to text: inout String) {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
             UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"):
            text.unicodeScalars.append(Unicode.Scalar(byte))
        default:
            let digits = Array("0123456789ABCDEF".unicodeScalars)
            text.unicodeScalars.append("%")
            text.unicodeScalars.append(digits[Int(byte >> 4)])
            text.unicodeScalars.append(digits[Int(byte & 0xF)])
        }
    }
}
