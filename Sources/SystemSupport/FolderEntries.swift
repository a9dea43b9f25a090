import Glibc

/// The names in a folder, as exact bytes (no `.` and `..`), read with `readdir` to the end.
package enum FolderEntries {
    /// The names in the folder open as `descriptor`, in the order the file system gives them.
    /// The descriptor stays open and owned by the caller (`fdopendir` gets a duplicate) and is
    /// read from the start whatever its position.
    package static func names(inFolder descriptor: Int32) -> Result<[[UInt8]], Errno> {
        let duplicate = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
        guard duplicate >= 0 else { return .failure(.current) }
        guard let stream = fdopendir(duplicate) else {
            let error = Errno.current
            _ = close(duplicate)
            return .failure(error)
        }
        defer { closedir(stream) }
        rewinddir(stream)
        var names: [[UInt8]] = []
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 { return .failure(.current) }
                return .success(names)
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix(while: { $0 != 0 })) }
            if name == [0x2E] || name == [0x2E, 0x2E] { continue }
            names.append(name)
        }
    }
}
