import Foundation
import Glibc

// Test helpers for names that are not valid UTF-8. Built with plain C calls and hand-made
// percent-encoding, so the tests do not depend on the code under test to make their fixtures.

/// A file URL for `folder` + a name given as raw bytes (percent-encoded, as Foundation keeps
/// bytes that are not UTF-8).
public func rawNameURL(in folder: URL, _ name: [UInt8]) -> URL {
    var text = folder.absoluteString
    if !text.hasSuffix("/") { text += "/" }
    for byte in name {
        let isPlain = (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A)
            || (byte >= 0x61 && byte <= 0x7A) || byte == 0x2E || byte == 0x2D || byte == 0x5F
        text += isPlain ? String(UnicodeScalar(byte)) : String(format: "%%%02X", byte)
    }
    guard let url = URL(string: text) else { preconditionFailure("test URL for \(name)") }
    return url
}

/// The bytes of `folder`'s path (valid UTF-8 in these tests) + `/` + `name`, NUL-terminated.
public func rawPath(in folder: URL, _ name: [UInt8]) -> [CChar] {
    (Array(folder.path.utf8) + [UInt8(ascii: "/")] + name + [0]).map { CChar(bitPattern: $0) }
}

/// Creates (or truncates) the file `folder/name` with `contents`, by its bytes.
@discardableResult
public func writeRaw(in folder: URL, _ name: [UInt8], _ contents: String) -> Bool {
    let fd = rawPath(in: folder, name).withUnsafeBufferPointer {
        open($0.baseAddress!, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    }
    guard fd >= 0 else { return false }
    defer { close(fd) }
    let bytes = Array(contents.utf8)
    return bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == bytes.count
}

/// The contents of `folder/name`, read by its bytes; nil if it cannot be opened.
public func readRaw(in folder: URL, _ name: [UInt8]) -> String? {
    let fd = rawPath(in: folder, name).withUnsafeBufferPointer { open($0.baseAddress!, O_RDONLY | O_CLOEXEC) }
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var result: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count <= 0 { break }
        result += buffer[0..<count]
    }
    return String(decoding: result, as: UTF8.self)
}

/// The names in `folder`, as raw bytes, sorted, without "." and "..".
public func rawListing(_ folder: URL) -> [[UInt8]] {
    guard let stream = opendir(folder.path) else { return [] }
    defer { closedir(stream) }
    var names: [[UInt8]] = []
    while let entry = readdir(stream) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix(while: { $0 != 0 })) }
        if name != [0x2E] && name != [0x2E, 0x2E] { names.append(name) }
    }
    return names.sorted { $0.lexicographicallyPrecedes($1) }
}
