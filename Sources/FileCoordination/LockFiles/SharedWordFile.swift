import CSystemShim
import Glibc
import Synchronization

/// A small file of 64-bit words in the lock directory, mapped shared by every process that uses
/// the directory (`@epoch`, `@pending`), each word accessed atomically.
///
/// Another process of the same user can truncate the file: the mapping is guarded
/// (`cshim_guard_shared_mapping`), so the fault that follows replaces it with private zeros
/// instead of killing this process, and ``isLost`` turns true. Mapped once per process and never
/// unmapped (the guard must keep owning its addresses).
struct SharedWordFile: @unchecked Sendable {
    // @unchecked: `words` points into a mapping that lives as long as the process; every access
    // to it is atomic; `guardNumber` is immutable.
    private let words: UnsafeMutablePointer<Atomic<UInt64>>
    private let guardNumber: Int32

    /// Word `index` (below the count it was mapped with).
    @inline(__always)
    func word(_ index: Int) -> UnsafeMutablePointer<Atomic<UInt64>> { words + index }

    /// Whether the file was truncated under this process (its words are no longer shared).
    @inline(__always)
    var isLost: Bool { cshim_shared_mapping_lost(guardNumber) != 0 }

    /// Where the words start (for a file laid out in words at byte offsets, as the presence table is).
    var address: UnsafeMutableRawPointer { UnsafeMutableRawPointer(words) }

    /// Opens (making it, zero-filled, if needed) and maps `count` words of the file at `path`;
    /// nil when it cannot be made, is not a regular file of this user, or cannot be mapped.
    static func map(_ path: String, words count: Int) -> SharedWordFile? {
        guard let (file, descriptor) = mapKeepingDescriptor(path, words: count) else { return nil }
        close(descriptor)
        return file
    }

    /// As ``map(_:words:)``, also returning the open descriptor the mapping was made from (for
    /// locks on the file's bytes); the caller owns it.
    static func mapKeepingDescriptor(_ path: String, words count: Int) -> (file: SharedWordFile, descriptor: Int32)? {
        let fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return nil }
        var info = stat()
        let size = count * MemoryLayout<UInt64>.size
        // Only ever grows, with zeros, so two processes racing here agree.
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid(),
              info.st_size >= size || ftruncate(fd, off_t(size)) == 0,
              let address = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), address != MAP_FAILED else {
            close(fd)
            return nil
        }
        // Guarded before the first access; unguarded, it is not used (the file may be cut short).
        let guardNumber = cshim_guard_shared_mapping(address, size)
        guard guardNumber >= 0 else {
            munmap(address, size)
            close(fd)
            return nil
        }
        return (SharedWordFile(words: address.bindMemory(to: Atomic<UInt64>.self, capacity: count), guardNumber: guardNumber), fd)
    }
}

/// One value per lock directory, made once per process (nil when it could not be; not tried
/// again): the process-wide mapping of a ``SharedWordFile`` kind, shared by every runtime that
/// uses that directory.
final class PerLockDirectory<Value: Sendable>: Sendable {
    private let made = Locked<[String: Value?]>([:])
    private let make: @Sendable (String) -> Value?

    init(_ make: @escaping @Sendable (String) -> Value?) {
        self.make = make
    }

    /// The value for the lock directory at `directoryPath`.
    func of(_ directoryPath: String) -> Value? {
        made.withLock { made in
            if let known = made[directoryPath] { return known }
            let value = make(directoryPath)
            made[directoryPath] = .some(value)
            return value
        }
    }
}
