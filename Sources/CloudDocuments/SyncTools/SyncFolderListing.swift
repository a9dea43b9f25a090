import Foundation
import Glibc
import SystemSupport

/// Lists a folder's names losslessly (names that are not valid UTF-8 keep their bytes, see
/// `PathBytes`), for the conflict-copy rules, which need every name of the folder.
package enum SyncFolderListing {
    /// The names in the folder at `path` (a lossless path string), without `.` and `..`, in
    /// directory order; nil when the folder cannot be read. One `opendir`/`readdir` pass. Any thread.
    package static func names(inFolder path: String) -> [String]? {
        names(inFolder: path, startingWith: [])
    }

    /// The names in the folder at `path` that can be conflict copies of `originalName` (or other
    /// originals they could be matched with): those starting with its bytes up to its first dot,
    /// as ``SyncConflictNaming/conflictGroup(of:in:options:)`` needs. The test is made on the
    /// entry's raw bytes, so no string is made for the other entries of a large folder.
    package static func candidateNames(inFolder path: String, forOriginal originalName: String) -> [String]? {
        let bytes = PathBytes.bytes(of: originalName)
        return names(inFolder: path, startingWith: Array(bytes[..<(bytes.firstIndex(of: UInt8(ascii: ".")) ?? bytes.endIndex)]))
    }

    /// The names in the folder at `path` whose raw bytes start with `prefix`.
    private static func names(inFolder path: String, startingWith prefix: [UInt8]) -> [String]? {
        guard let stream = PathBytes.withCString(path, { opendir($0) }) else { return nil }
        defer { closedir(stream) }
        var names: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(stream) else { return errno == 0 ? names : nil }
            let name: String? = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                let bytes = raw.prefix(while: { $0 != 0 })
                if !bytes.starts(with: prefix) { return nil }
                if bytes.elementsEqual([UInt8(ascii: ".")]) || bytes.elementsEqual([UInt8(ascii: "."), UInt8(ascii: ".")]) {
                    return nil
                }
                return PathBytes.string(fromBytes: bytes)
            }
            if let name { names.append(name) }
        }
    }

    /// The folder and the name of the item at `path` (a lossless path string; trailing slashes
    /// ignored), or nil for the root or a path without a name.
    package static func split(_ path: String) -> (folder: String, name: String)? {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return nil }
        let name = String(trimmed[trimmed.index(after: slash)...])
        guard !name.isEmpty, name != ".", name != ".." else { return nil }
        let folder = slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
        return (folder, name)
    }

    /// `folder` and `name` joined with one `/`.
    package static func join(_ folder: String, _ name: String) -> String {
        folder.hasSuffix("/") ? folder + name : folder + "/" + name
    }

    /// The modification date of the item at `path` (not following a final link), or nil.
    package static func modificationDate(of path: String) -> Date? {
        FileIdentity.of(path, followingLinks: false)?.modificationDate
    }
}
