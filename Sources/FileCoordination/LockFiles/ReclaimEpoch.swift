import CSystemShim
import Glibc
import Synchronization

/// A counter shared by every process using one lock directory: a memory-mapped 8-byte file,
/// `<lockdir>/@epoch`. A reclaimer increments it *before* it unlinks a lock file, while it holds
/// that file's exclusive lock; a holder that finds it unchanged since its descriptor was last seen
/// linked knows no lock file was unlinked since, and skips the `fstat`.
///
/// Another process of the same user can truncate the file: the mapping is guarded
/// (`cshim_guard_shared_mapping`), so the fault that follows replaces it with private memory
/// instead of killing this process, and from then on ``value`` is nil (every holder checks with
/// `fstat`) and ``advance()`` returns false (the reclaimer does not unlink).
///
/// The name cannot collide with a mirrored item: mirrored names starting with `@` are `@`,
/// `@@…` or `@#…`.
final class ReclaimEpoch: @unchecked Sendable {
    // @unchecked: `counter` points into a shared mapping that stays mapped for the life of the
    // process (never unmapped: the guard must keep owning its addresses); every access to it is
    // atomic; `guardNumber` is immutable.
    static let fileName = "@epoch"

    private let counter: UnsafeMutablePointer<Atomic<UInt64>>
    private let guardNumber: Int32

    private init(counter: UnsafeMutablePointer<Atomic<UInt64>>, guardNumber: Int32) {
        self.counter = counter
        self.guardNumber = guardNumber
    }

    /// The current value (acquiring: read after the caller's lock was granted), or nil once the
    /// file was truncated under this process (the counter is no longer shared).
    @inline(__always)
    var value: UInt64? {
        let current = counter.pointee.load(ordering: .acquiring)
        return cshim_shared_mapping_lost(guardNumber) == 0 ? current : nil
    }

    /// Called by a reclaimer holding the exclusive lock of the file it is about to unlink.
    /// Returns false when the counter is no longer shared (the file was truncated): then other
    /// processes cannot see the advance, and the file must not be unlinked.
    func advance() -> Bool {
        counter.pointee.wrappingAdd(1, ordering: .sequentiallyConsistent)
        return cshim_shared_mapping_lost(guardNumber) == 0
    }

    /// Per lock directory: its epoch, or nil when it could not be mapped (not tried again).
    /// Process-wide, not per `CoordinationRuntime`: one mapping per lock directory *file*, shared
    /// by every runtime that uses that directory.
    private static let mapped = Locked<[String: ReclaimEpoch?]>([:])

    /// The epoch of the lock directory at `directoryPath`, mapped once per process; nil when the
    /// file cannot be made or mapped (then every holder always checks with `fstat`, and this
    /// process's reclaimer never unlinks).
    static func of(directoryPath: String) -> ReclaimEpoch? {
        mapped.withLock { mapped in
            if let known = mapped[directoryPath] { return known }
            let epoch = map(directoryPath + "/" + fileName)
            mapped[directoryPath] = .some(epoch)
            return epoch
        }
    }

    private static func map(_ path: String) -> ReclaimEpoch? {
        let fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid() else { return nil }
        let size = MemoryLayout<UInt64>.size
        // Only ever grows from 0 to 8 bytes (zeros), so two processes racing here agree.
        if info.st_size < size, ftruncate(fd, off_t(size)) != 0 { return nil }
        guard let address = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0),
              address != MAP_FAILED else { return nil }
        // Guarded before the first access; unguarded, it is not used (the file may be cut short).
        let guardNumber = cshim_guard_shared_mapping(address, size)
        guard guardNumber >= 0 else {
            munmap(address, size)
            return nil
        }
        return ReclaimEpoch(counter: address.bindMemory(to: Atomic<UInt64>.self, capacity: 1), guardNumber: guardNumber)
    }
}
