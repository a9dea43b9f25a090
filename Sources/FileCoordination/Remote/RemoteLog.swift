import Glibc
import Synchronization

/// Where the remote-presenter transport reports what it dropped: a malformed frame, a refused
/// peer, a lost connection. One line on standard error each, prefixed `FileCoordination:`; the
/// receiver never crashes on what a peer sends. `droppedCount` lets tests observe it.
enum RemoteLog {
    private static let dropped = Atomic<Int>(0)

    /// How many frames or connections were dropped since the process started.
    static var droppedCount: Int { dropped.load(ordering: .acquiring) }

    /// Reports one dropped frame or connection and why.
    static func dropped(_ what: String) {
        dropped.add(1, ordering: .acquiringAndReleasing)
        let line = Array("FileCoordination: remote presenters: dropped \(what)\n".utf8)
        line.withUnsafeBytes { _ = write(2, $0.baseAddress, $0.count) }
    }

    /// Reports a save request answered without the presenter (a wait cycle between processes,
    /// or no answer within `RemotePresence.saveAnswerLimit`): the reader reads the bytes on disk.
    static func unsaved(_ what: String) {
        let line = Array("FileCoordination: remote presenters: \(what)\n".utf8)
        line.withUnsafeBytes { _ = write(2, $0.baseAddress, $0.count) }
    }
}
