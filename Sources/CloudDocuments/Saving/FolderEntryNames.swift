import CSystemShim
import Glibc
import SystemSupport

/// Reads the entry names of a folder through a descriptor the caller keeps open (a save reuses the
/// descriptor of its folder for the final `fsync`, saving the `open`, `fstat` and `close` of
/// `opendir`/`closedir`). Internal; any thread.
enum FolderEntryNames {
    /// Calls `body` with the bytes of each entry's name (without the terminating NUL; `.` and
    /// `..` included) of the folder open as `folder`, read from its current position (the start,
    /// for a new descriptor) to the end, with `getdents64(2)` (CSystemShim). Returns `false` when
    /// the folder could not be read (the names seen until then were passed to `body`). Where the
    /// kernel lacks `getdents64` (ENOSYS), reads with `readdir` instead.
    static func forEach(inFolder folder: Int32, _ body: (UnsafeRawBufferPointer) -> Void) -> Bool {
        withUnsafeTemporaryAllocation(byteCount: 16 * 1024, alignment: 8) { buffer in
            guard let base = buffer.baseAddress else { return false }
            while true {
                let count: Int
                switch valueOrErrno({ cshim_getdents64(folder, base, buffer.count) }) {
                case .success(0): return true
                case .success(let filled): count = filled
                case .failure(let error) where error.rawValue == ENOSYS:
                    return forEachWithStream(inFolder: folder, body)
                case .failure: return false
                }
                // Records of the kernel's `struct linux_dirent64` (CSystemShim's `cshim_dirent64`):
                // fixed fields, then the name, NUL-terminated and padded to the record length.
                let nameOffset = CSHIM_DIRENT64_NAME_OFFSET
                var offset = 0
                while offset + nameOffset < count {
                    let record = UnsafeRawPointer(base + offset)
                    let recordLength = Int(cshim_dirent64_record_length(record))
                    guard recordLength > nameOffset, offset + recordLength <= count else { return false }
                    let field = UnsafeRawBufferPointer(rebasing: buffer[(offset + nameOffset)..<(offset + recordLength)])
                    body(UnsafeRawBufferPointer(rebasing: field[..<(field.firstIndex(of: 0) ?? field.count)]))
                    offset += recordLength
                }
            }
        }
    }

    /// The same with `readdir` on a stream of a duplicate descriptor (`closedir` closes the
    /// descriptor it was given): where `getdents64` is missing.
    private static func forEachWithStream(inFolder folder: Int32, _ body: (UnsafeRawBufferPointer) -> Void) -> Bool {
        let duplicate = fcntl(folder, F_DUPFD_CLOEXEC, 0)
        guard duplicate >= 0 else { return false }
        guard let stream = fdopendir(duplicate) else {
            _ = close(duplicate)
            return false
        }
        defer { closedir(stream) }
        while let entry = readdir(stream) {
            withUnsafeBytes(of: entry.pointee.d_name) { raw in
                body(UnsafeRawBufferPointer(rebasing: raw[..<(raw.firstIndex(of: 0) ?? raw.count)]))
            }
        }
        return true
    }
}
