import CSystemShim
import FileCoordination
import Foundation
import Glibc
import SystemSupport

/// Plain streaming file operations of the engine (no coordination): copy, compare, flush.
/// Any thread; memory bounded by one 64 KiB buffer per call.
enum LocalFiles {
    static let bufferSize = 1 << 16

    /// Copies the open file `source` to a new file at `destination` (replaced if present).
    static func copy(from source: Int32, to destination: String) throws(SyncStepError) {
        let opened = valueOrErrno { open(destination, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600) }
        guard case .success(let output) = opened else { throw .local(path: destination, reason: Self.message(opened)) }
        defer { close(output) }
        // The cheapest first: a reflink shares the blocks (Btrfs, XFS); then the kernel copies
        // (`copy_file_range`, no user-space buffer); only then a read/write loop.
        if cshim_ficlone(output, source) == 0 { return }
        var inputOffset: Int64 = 0
        while true {
            let copied = valueOrErrno { cshim_copy_file_range(source, &inputOffset, output, nil, 1 << 30, 0) }
            switch copied {
            case .success(0): return
            case .success: continue
            case .failure(let error) where inputOffset == 0 && [EXDEV, EOPNOTSUPP, EINVAL, ENOSYS].contains(error.rawValue):
                try copyByReading(from: source, to: output, destination: destination)
                return
            case .failure(let error):
                throw .local(path: destination, reason: "copying the item: \(error.message)")
            }
        }
    }

    /// Makes `destination` (replaced if present) a reflink of the open file `source` — its blocks
    /// shared, no byte copied (Btrfs, XFS). Returns `false`, leaving no file, where the file
    /// system cannot (ext4, tmpfs) or the file cannot be made.
    static func reflink(from source: Int32, to destination: String) -> Bool {
        let output = open(destination, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard output >= 0 else { return false }
        defer { close(output) }
        if cshim_ficlone(output, source) == 0 { return true }
        unlink(destination)
        return false
    }

    /// The read/write loop of ``copy(from:to:)``, where the kernel cannot copy.
    private static func copyByReading(from source: Int32, to output: Int32, destination: String) throws(SyncStepError) {
        var buffer = [UInt8](repeating: 0, count: bufferSize)
        var offset: off_t = 0
        while true {
            let read = buffer.withUnsafeMutableBytes { bytes in valueOrErrno { pread(source, bytes.baseAddress, bytes.count, offset) } }
            guard case .success(let count) = read else { throw .local(path: destination, reason: "reading the item: \(Self.message(read))") }
            if count == 0 { return }
            var written = 0
            while written < count {
                let result = buffer.withUnsafeBytes { bytes in
                    valueOrErrno { write(output, bytes.baseAddress.map { $0 + written }, count - written) }
                }
                guard case .success(let done) = result else { throw .local(path: destination, reason: Self.message(result)) }
                written += done
            }
            offset += off_t(count)
        }
    }

    /// The message of a failed call's result.
    private static func message<T>(_ result: Result<T, Errno>) -> String {
        if case .failure(let error) = result { return error.message }
        return "failed"
    }

    /// Whether the files at `first` and `second` hold the same bytes.
    static func haveSameContents(_ first: String, _ second: String) -> Bool {
        let a = open(first, O_RDONLY | O_CLOEXEC | O_NOFOLLOW), b = open(second, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        defer { if a >= 0 { close(a) }; if b >= 0 { close(b) } }
        guard a >= 0, b >= 0 else { return false }
        var infoA = stat(), infoB = stat()
        guard fstat(a, &infoA) == 0, fstat(b, &infoB) == 0, infoA.st_size == infoB.st_size else { return false }
        var bufferA = [UInt8](repeating: 0, count: bufferSize), bufferB = [UInt8](repeating: 0, count: bufferSize)
        while true {
            let countA = readFully(a, &bufferA), countB = readFully(b, &bufferB)
            guard countA == countB, countA >= 0 else { return false }
            if countA == 0 { return true }
            if bufferA[0..<countA] != bufferB[0..<countB] { return false }
        }
    }

    private static func readFully(_ descriptor: Int32, _ buffer: inout [UInt8]) -> Int {
        var total = 0
        while total < buffer.count {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress.map { $0 + total }, $0.count - total) }
            if count < 0 { if errno == EINTR { continue }; return -1 }
            if count == 0 { break }
            total += count
        }
        return total
    }

    /// `fsync` of the file or folder at `path`.
    static func flush(_ path: String) throws(SyncStepError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .local(path: path, reason: Errno.current.message) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw .local(path: path, reason: "flush: \(Errno.current.message)") }
    }

    /// Creates the folder at `path` and its missing parents (mode 0755, umask applied).
    static func makeFolders(_ path: String) throws(SyncStepError) {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw .local(path: path, reason: "cannot create the folder: \(error.localizedDescription)")
        }
    }

    static func remove(_ path: String) { _ = unlink(path) }
}
