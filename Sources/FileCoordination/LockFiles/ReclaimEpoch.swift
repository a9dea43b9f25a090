/// A counter shared by every process using one lock directory: the 8-byte file
/// `<lockdir>/@epoch` (a ``SharedWordFile``). A reclaimer increments it *before* it unlinks a
/// lock file, while it holds that file's exclusive lock; a holder that finds it unchanged since
/// its descriptor was last seen linked knows no lock file was unlinked since, and skips the
/// `fstat`.
///
/// If another process truncates the file, ``value`` is nil from then on (every holder checks
/// with `fstat`) and ``advance()`` returns false (the reclaimer does not unlink).
///
/// The name cannot collide with a mirrored item: mirrored names starting with `@` are `@`,
/// `@@…` or `@#…`.
final class ReclaimEpoch: Sendable {
    static let fileName = "@epoch"

    private let file: SharedWordFile

    private init(file: SharedWordFile) {
        self.file = file
    }

    /// The current value (acquiring: read after the caller's lock was granted), or nil once the
    /// file was truncated under this process (the counter is no longer shared).
    @inline(__always)
    var value: UInt64? {
        let current = file.word(0).pointee.load(ordering: .acquiring)
        return file.isLost ? nil : current
    }

    /// Called by a reclaimer holding the exclusive lock of the file it is about to unlink.
    /// Returns false when the counter is no longer shared (the file was truncated): then other
    /// processes cannot see the advance, and the file must not be unlinked.
    func advance() -> Bool {
        file.word(0).pointee.wrappingAdd(1, ordering: .sequentiallyConsistent)
        return !file.isLost
    }

    private static let mapped = PerLockDirectory { directoryPath in
        SharedWordFile.map(directoryPath + "/" + fileName, words: 1).map(ReclaimEpoch.init)
    }

    /// The epoch of the lock directory at `directoryPath`, mapped once per process; nil when the
    /// file cannot be made or mapped (then every holder always checks with `fstat`, and this
    /// process's reclaimer never unlinks).
    static func of(directoryPath: String) -> ReclaimEpoch? { mapped.of(directoryPath) }
}
