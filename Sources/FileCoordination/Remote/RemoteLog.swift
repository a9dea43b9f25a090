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

    private static let cutOffs = Atomic<Int>(0)

    /// How many answers from other processes were not awaited past `RemotePresence.answerLimit`
    /// since the process started (ordinary editing never reaches the limit: tests assert 0).
    static var cutOffCount: Int { cutOffs.load(ordering: .acquiring) }

    /// Reports an answer from another process that did not come within
    /// `RemotePresence.answerLimit`: the coordination went on as if it had been answered.
    static func cutOff(_ what: String) {
        cutOffs.add(1, ordering: .acquiringAndReleasing)
        unsaved(what)
    }

    /// Reports a request answered without the presenter (a wait cycle between processes):
    /// the asker goes on with the bytes on disk.
    static func unsaved(_ what: String) {
        let line = Array("FileCoordination: remote presenters: \(what)\n".utf8)
        line.withUnsafeBytes { _ = write(2, $0.baseAddress, $0.count) }
    }
}
