import Glibc

/// Reads the entry names of a folder through a descriptor the caller keeps open (a save reuses the
/// descriptor of its folder for the final `fsync`, saving the `open`, `fstat` and `close` of
/// `opendir`/`closedir`). Internal; any thread.
enum FolderEntryNames {
    /// `getdents64(2)`: glibc has it since 2.30, but the Glibc module does not import it; looked
    /// up once.
    private typealias GetDirectoryEntries = @convention(c) (Int32, UnsafeMutableRawPointer?, Int) -> Int
    private static let getDirectoryEntries: GetDirectoryEntries? = {
        guard let symbol = dlsym(nil, "getdents64") else { return nil }
        return unsafeBitCast(symbol, to: GetDirectoryEntries.self)
    }()

    /// Calls `body` with the bytes of each entry's name (without the terminating NUL; `.` and
    /// `..` included) of the folder open as `folder`, read from its current position (the start,
    /// for a new descriptor) to the end. Returns `false` when the folder could not be read (the
    /// names seen until then were passed to `body`).
    static func forEach(inFolder folder: Int32, _ body: (UnsafeRawBufferPointer) -> Void) -> Bool {
        guard let getDirectoryEntries else { return forEachWithStream(inFolder: folder, body) }
        return withUnsafeTemporaryAllocation(byteCount: 16 * 1024, alignment: 8) { buffer in
            while true {
                let count = getDirectoryEntries(folder, buffer.baseAddress, buffer.count)
                if count == 0 { return true }
                if count < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                // struct linux_dirent64: d_ino (8 bytes), d_off (8), d_reclen (2), d_type (1),
                // d_name (NUL-terminated, padded to the record length).
                var offset = 0
                while offset + 19 < count {
                    let recordLength = Int(buffer.load(fromByteOffset: offset + 16, as: UInt16.self))
                    guard recordLength > 19, offset + recordLength <= count else { return false }
                    let field = UnsafeRawBufferPointer(rebasing: buffer[(offset + 19)..<(offset + recordLength)])
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
