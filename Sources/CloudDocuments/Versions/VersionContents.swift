import CSystemShim
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
        guard let info else { throw .storeFailed(path: source, call: "lstat", errno: .noSuchFileOrDirectory) }
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
            // errno is read inside each call's closure (`valueOrErrno`): what `withCString` does
            // after the call returns may change it.
            let read = PathBytes.withCString(source) { cSource in valueOrErrno { readlink(cSource, &buffer, buffer.count - 1) } }
            let count: Int
            switch read {
            case .success(let value): count = value
            case .failure(let error): throw .storeFailed(path: source, call: "readlink", errno: error)
            }
            let target = PathBytes.string(fromBytes: buffer[..<count].map { UInt8(bitPattern: $0) })
            let linked = PathBytes.withCString(target) { cTarget in
                PathBytes.withCString(destination) { cDestination in valueOrErrno { symlink(cTarget, cDestination) } }
            }
            if case .failure(let error) = linked { throw .storeFailed(path: destination, call: "symlink", errno: error) }
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

    /// Creates the file `path` with `data`, flushed when `flushing` (else see ``syncTogether(_:)``).
    static func writeNewFile(_ data: Data, at path: String, flushing: Bool = true) throws(FileVersionError) {
        do throws(SystemCallError) {
            let file = try POSIX.open(path, O_CREAT | O_EXCL | O_WRONLY, mode: 0o600)
            do throws(SystemCallError) {
                try writeAll(data, to: file)
                if flushing { try file.sync() }
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
    /// `fsync`s the files and folders at `paths` (not following a final symbolic link) all at
    /// once, one thread each (the calling thread takes the first). A journaling file system (ext4,
    /// XFS) then makes them durable with one journal commit instead of one per call: a version's
    /// metadata file and its two folders cost about what one `fsync` costs (Docs/Performance.md,
    /// "Versions"). Returns when all have finished; throws the first failure.
    static func syncTogether(_ paths: [String]) throws(FileVersionError) {
        guard let first = paths.first else { return }
        // `@unchecked Sendable`: `failure` is only read and written under `lock`.
        final class Failure: @unchecked Sendable {
            let lock = NSLock()
            var failure: SystemCallError?
            func record(_ error: SystemCallError) { lock.withLock { if failure == nil { failure = error } } }
        }
        let result = Failure()
        let finished = DispatchSemaphore(value: 0)
        for path in paths.dropFirst() {
            Thread.detachNewThread {
                do throws(SystemCallError) { try syncOne(path) } catch { result.record(error) }
                finished.signal()
            }
        }
        do throws(SystemCallError) { try syncOne(first) } catch { result.record(error) }
        for _ in paths.dropFirst() { finished.wait() }
        if let failure = result.lock.withLock({ result.failure }) { throw FileVersionError(failure) }
    }

    /// Opens `path` (file or folder, not following a final symbolic link), `fsync`s it, closes it.
    private static func syncOne(_ path: String) throws(SystemCallError) {
        let file = try POSIX.open(path, O_RDONLY | O_NOFOLLOW)
        do { try file.sync() } catch { _ = Glibc.close(file.rawValue); throw error }
        try file.close()
    }
}

extension VersionContents {
    /// Copies the bytes of the file `source` into the existing file `destination` (truncating it):
    /// as a reflink (`FICLONE`: the blocks are shared, nothing is copied) where the file system
    /// can (Btrfs, XFS), else with `read`/`write` of 1 MiB. Not `copy_file_range(2)`: on ext4 it
    /// measured about 10 % slower than `read`/`write` for a 16 MiB file (versions-benchmark, row c).
    static func copyBytes(_ source: String, into destination: String) throws(FileVersionError) {
        do throws(SystemCallError) {
            let input = try POSIX.open(source, O_RDONLY)
            defer { _ = Glibc.close(input.rawValue) }
            let output = try POSIX.open(destination, O_WRONLY | O_TRUNC | O_NOFOLLOW)
            defer { _ = Glibc.close(output.rawValue) }
            if cshim_ficlone(output.rawValue, input.rawValue) == 0 { return }
            var buffer = [UInt8](repeating: 0, count: 1 << 20)
            while true {
                let count = try buffer.withUnsafeMutableBytes { raw in valueOrErrno { Glibc.read(input.rawValue, raw.baseAddress, raw.count) } }
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
