import FileCoordination
import Foundation
import Glibc

/// The few plain file operations the journal needs, each mapped to ``JournalError``.
enum POSIXFile {
    /// The whole file at `path`, or `nil` when it does not exist.
    static func readAll(_ path: String) throws(JournalError) -> Data? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        if descriptor < 0 {
            if errno == ENOENT { return nil }
            throw JournalError(operation: "open", path: path, errno: .current)
        }
        defer { close(descriptor) }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw JournalError(operation: "read", path: path, errno: .current)
            }
            if count == 0 { return data }
            data.append(contentsOf: buffer[0..<count])
        }
    }

    /// Writes all of `data` at the descriptor's offset, retrying short writes and `EINTR`.
    static func writeAll(_ data: Data, to descriptor: Int32, path: String) throws(JournalError) {
        var failure: Errno?
        data.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = write(descriptor, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = .current
                    return
                }
                offset += written
            }
        }
        if let failure { throw JournalError(operation: "write", path: path, errno: failure) }
    }

    /// `fsync` of the folder at `path` (so a rename inside it is durable).
    static func syncFolder(_ path: String) throws(JournalError) {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw JournalError(operation: "open folder", path: path, errno: .current) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw JournalError(operation: "flush folder", path: path, errno: .current) }
    }

    static func removeQuietly(_ path: String) { _ = unlink(path) }
}
