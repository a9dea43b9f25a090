import CSystemShim
import Glibc
import SystemSupport

/// An open file descriptor used while an upload snapshot is made, closed when the value goes away.
/// Every failing call throws ``CoordinationError/ioFailed(path:errno:)`` naming `path`; calls
/// interrupted by a signal (`EINTR`) are retried.
final class SnapshotFile {
    let descriptor: Int32
    /// The path shown in errors (for display only: files are opened relative to their folder).
    let path: String

    private init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    deinit { close(descriptor) }

    /// Opens `name` (raw bytes, no `/`, no NUL) relative to the folder `directory`, or an
    /// absolute path when `directory` is `AT_FDCWD`. `O_CLOEXEC` is always added.
    static func open(_ name: [UInt8], in directory: Int32, flags: Int32, mode: mode_t = 0,
                     displayPath: String) throws(CoordinationError) -> SnapshotFile {
        let cName = (name + [0]).map { CChar(bitPattern: $0) }
        switch valueOrErrno({ openat(directory, cName, flags | O_CLOEXEC, mode) }) {
        case .success(let descriptor): return SnapshotFile(descriptor: descriptor, path: displayPath)
        case .failure(let error): throw .ioFailed(path: displayPath, errno: error)
        }
    }

    func status() throws(CoordinationError) -> stat {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw .ioFailed(path: path, errno: .current) }
        return info
    }

    /// Reads up to `buffer.count` bytes at `offset`; fewer only at the end of the file.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(CoordinationError) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        var done = 0
        while done < buffer.count {
            let count = try checked(valueOrErrno {
                pread(descriptor, base + done, buffer.count - done, off_t(offset) + off_t(done))
            })
            if count == 0 { break }
            done += count
        }
        return done
    }

    /// Writes all of `bytes` at `offset`.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(CoordinationError) {
        guard let base = bytes.baseAddress else { return }
        var done = 0
        while done < bytes.count {
            let count = try checked(valueOrErrno {
                pwrite(descriptor, base + done, bytes.count - done, off_t(offset) + off_t(done))
            })
            // A regular file never accepts zero bytes without an error; don't spin if one does.
            if count == 0 { throw .ioFailed(path: path, errno: .ioError) }
            done += count
        }
    }

    /// Sets the file's length (gives a copy that ends in a hole its full length).
    func truncate(to length: UInt64) throws(CoordinationError) {
        _ = try checked(valueOrErrno { ftruncate(descriptor, off_t(length)) })
    }

    /// The value, or ``CoordinationError/ioFailed(path:errno:)`` naming this file.
    private func checked<I>(_ result: Result<I, Errno>) throws(CoordinationError) -> I {
        switch result {
        case .success(let value): return value
        case .failure(let error): throw .ioFailed(path: path, errno: error)
        }
    }

    /// Where the next data (not a hole) starts at or after `offset`: `nil` when only a hole
    /// follows up to the end, `offset` itself when the file system cannot tell holes apart.
    func nextData(from offset: UInt64) throws(CoordinationError) -> UInt64? {
        let found = lseek(descriptor, off_t(offset), CSHIM_SEEK_DATA)
        if found >= 0 { return UInt64(found) }
        switch errno {
        case ENXIO: return nil
        case EINVAL, EOPNOTSUPP: return offset
        default: throw .ioFailed(path: path, errno: .current)
        }
    }

    /// Where the next hole (or the end of the file) starts at or after `offset`.
    func nextHole(from offset: UInt64, end: UInt64) throws(CoordinationError) -> UInt64 {
        let found = lseek(descriptor, off_t(offset), CSHIM_SEEK_HOLE)
        if found >= 0 { return UInt64(found) }
        switch errno {
        case ENXIO, EINVAL, EOPNOTSUPP: return end
        default: throw .ioFailed(path: path, errno: .current)
        }
    }
}

extension Array where Element == UInt8 {
    /// `withUnsafeBytes` for a body that throws ``CoordinationError`` (the standard one only
    /// rethrows untyped errors).
    func withRawBytes(_ body: (UnsafeRawBufferPointer) throws(CoordinationError) -> Void) throws(CoordinationError) {
        let failure: CoordinationError? = withUnsafeBytes { raw -> CoordinationError? in
            do throws(CoordinationError) {
                try body(raw)
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw failure }
    }
}
