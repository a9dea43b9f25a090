/// How a canonical item path maps to its lock file inside the lock directory.
///
/// The lock directory mirrors the file system: the item `/home/ann/notes.txt` has the lock file
/// `<lockdir>/home/ann/notes.txt/@`, and the root `/` has `<lockdir>/@`. Mirroring lets a
/// delete/move of a directory find the lock files of everything inside it by listing one folder.
/// A path component that starts with `@` gets one more `@` in front, so a component can never be
/// mistaken for the lock file `@`. A component too long to take the extra character is replaced
/// by `@#` and a hash of it, and so is a component holding bytes that are not UTF-8 (a canonical
/// path keeps those escaped with NUL, which a file name cannot hold).
enum LockFileNaming {
    static let lockFileName = "@"

    static func mirrorDirectory(for itemPath: String, in lockDirectory: String) -> String {
        var result = lockDirectory
        for component in itemPath.split(separator: "/") {
            result += "/" + escape(component)
        }
        return result
    }

    static func lockFilePath(for itemPath: String, in lockDirectory: String) -> String {
        mirrorDirectory(for: itemPath, in: lockDirectory) + "/" + lockFileName
    }

    static func escape(_ component: Substring) -> String {
        if component.utf8.count >= 250 || component.utf8.contains(0) {
            return "@#" + String(StableHash.fnv1a64(component.utf8), radix: 16)
        }
        return component.hasPrefix("@") ? "@" + component : String(component)
    }

    /// The item component for a mirrored directory name (nil for names that are not items).
    static func unescape(_ name: String) -> String? {
        if name.hasPrefix("@@") { return String(name.dropFirst()) }
        if name.hasPrefix("@") { return nil }
        return name
    }
}

/// A hash that is the same in every process and every run (Swift's `Hasher` is seeded per process).
enum StableHash {
    static let offsetBasis: UInt64 = 0xcbf2_9ce4_8422_2325

    @inline(__always)
    static func step(_ hash: UInt64, _ byte: UInt8) -> UInt64 {
        (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
    }

    static func fnv1a64<S: Sequence>(_ bytes: S) -> UInt64 where S.Element == UInt8 {
        var hash = offsetBasis
        for byte in bytes { hash = step(hash, byte) }
        return hash
    }
}
