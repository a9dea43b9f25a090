import Dispatch
import FileCoordination
import Foundation
import Glibc

/// Starts writing a download's bytes to disk while it is still arriving, so the `fsync` that
/// makes it durable before it is put in place has only the last piece left to wait for: every
/// ``interval`` bytes received, one `fdatasync` of the temporary file runs on a utility queue
/// (never on the transport's thread, and nobody waits for it; at most one at a time). A flush
/// that fails changes nothing: the final `fsync` reports the error.
///
/// Any thread (``received(_:)`` is called from the transport's progress callback).
final class DownloadWriteback: Sendable {
    /// Bytes received between two early flushes.
    static let interval: Int64 = 16 << 20

    private struct State {
        var flushedThrough: Int64 = 0
        var flushing = false
    }

    private let path: String
    private let state = Locked(State())

    init(path: String) { self.path = path }

    /// `done` bytes of the download were written to the temporary file.
    func received(_ done: Int64) {
        let start: Bool = state.withLock { state in
            guard !state.flushing, done - state.flushedThrough >= Self.interval else { return false }
            state.flushing = true
            state.flushedThrough = done
            return true
        }
        guard start else { return }
        let path = self.path, state = self.state
        DispatchQueue.global(qos: .utility).async {
            let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
            if descriptor >= 0 {
                _ = fdatasync(descriptor)
                close(descriptor)
            }
            state.withLock { $0.flushing = false }
        }
    }
}
