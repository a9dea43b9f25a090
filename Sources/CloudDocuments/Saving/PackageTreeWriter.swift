import Foundation
import Glibc
import SystemSupport

/// Writes the entries of a ``FilePackage`` into an existing, empty folder: every file created
/// with `O_EXCL`, written fully and `fsync`ed; every sub-folder created, filled, then `fsync`ed.
/// Files get `0644` and folders `0755`, both less the umask (permissions inside the old package
/// are not carried over). The caller `fsync`s the top folder and removes the tree on failure.
/// Internal; used on one thread at a time (it is a value with a running byte count).
struct PackageTreeWriter {
    /// Key of injected test failures.
    let injectionKey: String
    /// Called with the running total of bytes written.
    let progress: ((Int64) -> Void)?
    /// Bytes written so far, across all files.
    private(set) var bytesWritten: Int64 = 0

    init(injectionKey: String, progress: ((Int64) -> Void)?) {
        self.injectionKey = injectionKey
        self.progress = progress
    }

    mutating func writeEntries(of package: FilePackage, into folder: SystemPath) throws(SystemCallError) {
        for name in package.names {
            guard let entry = package[name] else { continue }
            let path = folder.appending(name)
            try SafeSave.checkInjectedFailure(.createTemporary, key: injectionKey, path: path.lossless)
            switch entry {
            case .file(let data):
                try writeFile(data, at: path)
            case .directory(let child):
                try POSIX.makeDirectory(path, mode: 0o755)
                try writeEntries(of: child, into: path)
                try SafeSave.checkInjectedFailure(.fsync, key: injectionKey, path: path.lossless)
                try POSIX.syncDirectory(path)
            }
        }
    }

    /// ``writeEntries(of:into:)`` into a folder given as a lossless path string (migration path:
    /// for callers not yet moved to `SystemPath`).
    mutating func writeEntries(of package: FilePackage, into folder: String) throws(SystemCallError) {
        try writeEntries(of: package, into: SystemPath(lossless: folder))
    }

    private mutating func writeFile(_ data: Data, at path: SystemPath) throws(SystemCallError) {
        let file = try POSIX.open(path, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW, mode: 0o644)
        do throws(SystemCallError) {
            let start = bytesWritten
            var total = start
            try SafeSave.writeChunks(of: data, to: file, injectionKey: injectionKey) { written in
                total = start + Int64(written)
                progress?(total)
            }
            bytesWritten = total
            try SafeSave.checkInjectedFailure(.fsync, key: injectionKey, path: path.lossless)
            try file.sync()
        } catch {
            _ = Glibc.close(file.rawValue)
            throw error
        }
        try file.close()
    }
}
