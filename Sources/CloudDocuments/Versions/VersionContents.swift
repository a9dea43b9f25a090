import Foundation
import Glibc
import SystemSupport

/// Copying, flushing and measuring the contents of versions (a file, or a folder such as a
/// package). Internal; any thread; no state.
enum VersionContents {
    /// Device and inode: which file a name leads to.
    struct Inode: Equatable {
        var device: UInt64
        var inode: UInt64
        init(_ info: stat) {
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
        }
    }

    static func inode(of path: String, followingLinks: Bool) -> Inode? {
        var info = stat()
        let result = PathBytes.withCString(path) { followingLinks ? stat($0, &info) : lstat($0, &info) }
        return result == 0 ? Inode(info) : nil
    }

    /// Copies the file or folder tree at `source` to the new path `destination` (which must not
    /// exist). Files and folders keep their permission bits; symbolic links are copied as links.
    /// Nothing is flushed: see ``syncTree(_:)``.
    static func copy(_ source: String, to destination: String) throws(FileVersionError) {
        let info: stat?
        do { info = try POSIX.linkStatus(source) } catch { throw FileVersionError(error) }
        guard let info else { throw .storeFailed(path: source, call: "lstat", errno: ENOENT) }
        let mode = info.st_mode & 0o7777
        switch info.st_mode & S_IFMT {
        case S_IFREG:
            do throws(SystemCallError) {
                try POSIX.open(destination, O_CREAT | O_EXCL | O_WRONLY, mode: 0o600).close()
            } catch { throw FileVersionError(error) }
            try copyBytes(source, into: destination)
            _ = PathBytes.withCString(destination) { chmod($0, mode) }
        case S_IFDIR:
            do throws(SystemCallError) { try POSIX.makeDirectory(destination, mode: 0o700) } catch {
                throw FileVersionError(error)
            }
            let names: [String]
            do { names = try POSIX.directoryEntries(source).names } catch { throw FileVersionError(error) }
            for name in names { try copy(source + "/" + name, to: destination + "/" + name) }
            _ = PathBytes.withCString(destination) { chmod($0, mode) }
        case S_IFLNK:
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let count = PathBytes.withCString(source) { readlink($0, &buffer, buffer.count - 1) }
            guard count >= 0 else { throw .storeFailed(path: source, call: "readlink", errno: errno) }
            let target = PathBytes.string(fromBytes: buffer[..<count].map { UInt8(bitPattern: $0) })
            let result = PathBytes.withCString(target) { cTarget in
                PathBytes.withCString(destination) { symlink(cTarget, $0) }
            }
            guard result == 0 else { throw .storeFailed(path: destination, call: "symlink", errno: errno) }
        default:
            return  // Devices, sockets, pipes: not part of a document; skipped.
        }
    }

    /// `fsync`s the file at `path`, or every file and folder of the tree at `path`.
    static func syncTree(_ path: String) throws(FileVersionError) {
        let info: stat?
        do { info = try POSIX.linkStatus(path) } catch { throw FileVersionError(error) }
        guard let info else { return }
        switch info.st_mode & S_IFMT {
        case S_IFREG:
            do throws(SystemCallError) {
                let file = try POSIX.open(path, O_RDONLY | O_NOFOLLOW)
                do { try file.sync() } catch { _ = Glibc.close(file.rawValue); throw error }
                try file.close()
            } catch { throw FileVersionError(error) }
        case S_IFDIR:
            let names: [String]
            do { names = try POSIX.directoryEntries(path).names } catch { throw FileVersionError(error) }
            for name in names { try syncTree(path + "/" + name) }
            do { try POSIX.syncDirectory(path) } catch { throw FileVersionError(error) }
        default:
            return  // Symbolic links: their entry is flushed with the folder.
        }
    }

    /// The bytes of the file at `path`, or of every file in the tree at `path`.
    static func size(of path: String) -> Int64 {
        guard let info = try? POSIX.linkStatus(path) else { return 0 }
        guard info.st_mode & S_IFMT == S_IFDIR else { return Int64(info.st_size) }
        let names = (try? POSIX.directoryEntries(path).names) ?? []
        return names.reduce(Int64(info.st_size)) { $0 + size(of: path + "/" + $1) }
    }

    /// Creates the file `path` with `data`, flushed.
    static func writeNewFile(_ data: Data, at path: String) throws(FileVersionError) {
        do throws(SystemCallError) {
            let file = try POSIX.open(path, O_CREAT | O_EXCL | O_WRONLY, mode: 0o600)
            do throws(SystemCallError) {
                try writeAll(data, to: file)
                try file.sync()
            } catch {
                _ = Glibc.close(file.rawValue)
                throw error
            }
            try file.close()
        } catch { throw FileVersionError(error) }
    }

    /// Writes all of `data` to `file`.
    static func writeAll(_ data: Data, to file: FileDescriptor) throws(SystemCallError) {
        var failure: SystemCallError?
        data.withUnsafeBytes { raw in
            do throws(SystemCallError) { try file.writeAll(raw) } catch { failure = error }
        }
        if let failure { throw failure }
    }
}

extension VersionContents {
    /// Copies the bytes of the file `source` into the existing file `destination` (truncating it).
    static func copyBytes(_ source: String, into destination: String) throws(FileVersionError) {
        do throws(SystemCallError) {
            let input = try POSIX.open(source, O_RDONLY)
            defer { _ = Glibc.close(input.rawValue) }
            let output = try POSIX.open(destination, O_WRONLY | O_TRUNC | O_NOFOLLOW)
            defer { _ = Glibc.close(output.rawValue) }
            var buffer = [UInt8](repeating: 0, count: 1 << 20)
            while true {
                let count = try valueOrErrno { buffer.withUnsafeMutableBytes { Glibc.read(input.rawValue, $0.baseAddress, $0.count) } }
                    .get(call: "read", path: source)
                if count == 0 { break }
                var failure: SystemCallError?
                buffer.withUnsafeBytes { raw in
                    do throws(SystemCallError) { try output.writeAll(UnsafeRawBufferPointer(rebasing: raw[..<count])) } catch { failure = error }
                }
                if let failure { throw failure }
            }
        } catch { throw FileVersionError(error) }
    }
}

extension VersionContents {
    /// `path` without trailing slashes (a folder URL's path has one), except for `/` itself.
    static func withoutTrailingSlashes(_ path: String) -> String {
        var path = path
        while path.count > 1, path.hasSuffix("/") { path.removeLast() }
        return path
    }
}
