/// How many writers wait at a pending gate, over every lock file of one lock directory and every
/// process using it: the 8-byte file `<lockdir>/@pending` (a ``SharedWordFile``).
///
/// A fresh reader must not pass a writer queued on the item's pending gate (writers would starve),
/// so it asks the kernel whether the gate is held (`F_OFD_GETLK`) before it takes its lock. While
/// this count is zero no writer is queued anywhere, and the reader skips that system call — a
/// third of an uncontended read's. The count is a hint for fairness only, never for exclusion
/// (the locks themselves exclude): a count left too high by a writer killed while it waited only
/// sends readers back to asking the kernel, and a count lost to a truncated file (read as
/// "unknown") does the same.
final class PendingWriters: Sendable {
    static let fileName = "@pending"

    private let file: SharedWordFile

    private init(file: SharedWordFile) {
        self.file = file
    }

    /// True when no writer waits at any pending gate of the directory (and the count is shared).
    @inline(__always)
    var noneWaiting: Bool {
        file.word(0).pointee.load(ordering: .acquiring) == 0 && !file.isLost
    }

    /// Runs `body` counted as a writer waiting at a pending gate.
    @inline(__always)
    func counting<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        file.word(0).pointee.wrappingAdd(1, ordering: .sequentiallyConsistent)
        defer { file.word(0).pointee.wrappingSubtract(1, ordering: .sequentiallyConsistent) }
        return try body()
    }

    private static let mapped = PerLockDirectory { directoryPath in
        SharedWordFile.map(directoryPath + "/" + fileName, words: 1).map(PendingWriters.init)
    }

    /// The count of the lock directory at `directoryPath`, mapped once per process; nil when the
    /// file cannot be made or mapped (then every fresh reader asks the kernel).
    static func of(directoryPath: String) -> PendingWriters? { mapped.of(directoryPath) }
}

extension Optional where Wrapped == PendingWriters {
    /// Runs `body` counted as a waiting writer when there is a count.
    @inline(__always)
    func counting<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        guard let count = self else { return try body() }
        return try count.counting(body)
    }
}
