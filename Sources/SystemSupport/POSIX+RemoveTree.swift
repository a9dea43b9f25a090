import Glibc

// Recursive removal of temporary and replaced trees. Any thread.

extension POSIX {
    /// Removes a file, or a folder and everything in it, without following symbolic links and
    /// whatever the bytes of the names inside (names are handled as raw bytes, relative to an open
    /// descriptor of their folder). Best effort: keeps going past failures and returns the first
    /// one, if any; `nil` when everything is gone (or nothing was there).
    @discardableResult
    package static func removeTree(_ path: SystemPath) -> SystemCallError? {
        path.withCString { cPath in removeTree(cPath, path: path.lossless) }
    }

    /// ``removeTree(_:)`` with the path's exact bytes in `cPath`; `path` names it in errors.
    private static func removeTree(_ cPath: UnsafePointer<CChar>, path: String) -> SystemCallError? {
        var info = stat()
        if lstat(cPath, &info) != 0 {
            return errno == ENOENT ? nil : SystemCallError(call: "lstat", path: path, code: errno)
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            return Glibc.unlink(cPath) == 0 || errno == ENOENT
                ? nil : SystemCallError(call: "unlink", path: path, code: errno)
        }
        let fd: Int32
        switch valueOrErrno({ Glibc.open(cPath, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }) {
        case .success(let opened): fd = opened
        case .failure(let error): return SystemCallError(call: "open", path: path, errno: error)
        }
        var first = removeContents(ofDirectory: fd, path: path)
        _ = Glibc.close(fd)
        if rmdir(cPath) != 0, first == nil { first = SystemCallError(call: "rmdir", path: path, code: errno) }
        return first
    }

    /// Removes everything inside the open directory `fd` (not the directory itself).
    private static func removeContents(ofDirectory fd: Int32, path: String) -> SystemCallError? {
        // fdopendir takes ownership of the descriptor it is given: give it a duplicate.
        let streamDescriptor = dup(fd)
        guard streamDescriptor >= 0 else { return SystemCallError(call: "dup", path: path, code: errno) }
        guard let stream = fdopendir(streamDescriptor) else {
            let code = errno
            _ = Glibc.close(streamDescriptor)
            return SystemCallError(call: "fdopendir", path: path, code: code)
        }
        // Read every name first: removing entries while reading the directory is unspecified.
        var names: [[CChar]] = []
        var first: SystemCallError?
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 { first = SystemCallError(call: "readdir", path: path, code: errno) }
                break
            }
            let name: [CChar] = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                raw.prefix(while: { $0 != 0 }).map { CChar(bitPattern: $0) } + [0]
            }
            if name == [0x2E, 0] || name == [0x2E, 0x2E, 0] { continue }
            names.append(name)
        }
        closedir(stream)
        for name in names {
            let shown = path + "/" + PathBytes.string(fromBytes: name.dropLast().map { UInt8(bitPattern: $0) })
            var info = stat()
            if fstatat(fd, name, &info, AT_SYMLINK_NOFOLLOW) != 0 {
                if errno != ENOENT, first == nil { first = SystemCallError(call: "lstat", path: shown, code: errno) }
                continue
            }
            if info.st_mode & S_IFMT == S_IFDIR {
                switch valueOrErrno({ openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0) }) {
                case .success(let child):
                    if let error = removeContents(ofDirectory: child, path: shown), first == nil { first = error }
                    _ = Glibc.close(child)
                case .failure(let error):
                    if first == nil { first = SystemCallError(call: "open", path: shown, errno: error) }
                }
                if unlinkat(fd, name, AT_REMOVEDIR) != 0, first == nil {
                    first = SystemCallError(call: "rmdir", path: shown, code: errno)
                }
            } else if unlinkat(fd, name, 0) != 0, errno != ENOENT, first == nil {
                first = SystemCallError(call: "unlink", path: shown, code: errno)
            }
        }
        return first
    }
}
