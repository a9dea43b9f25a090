import Foundation
import Synchronization

/// Whether standard input has ended, learned by a thread that reads it to the end (for commands
/// that run "until standard input ends", such as `agent status --watch`). Started on first use.
enum StandardInput {
    private static let ended = Atomic<Bool>(false)
    private static let started = Atomic<Bool>(false)

    /// `true` once standard input reached its end (or failed).
    static var hasEnded: Bool {
        if !started.exchange(true, ordering: .acquiringAndReleasing) {
            let thread = Thread {
                var buffer = [UInt8](repeating: 0, count: 512)
                while true {
                    let count = read(0, &buffer, buffer.count)
                    if count == 0 || (count < 0 && errno != EINTR) { break }
                }
                ended.store(true, ordering: .releasing)
            }
            thread.name = "clouddocs.stdin-end"
            thread.start()
        }
        return ended.load(ordering: .acquiring)
    }
}
