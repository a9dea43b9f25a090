import FileCoordination
import Synchronization

/// Stops one exchange from another thread: the cancelled task's handler calls ``interrupt()``,
/// which marks the exchange interrupted and shuts down the socket it is using, so a `poll(2)`
/// waiting on it returns at once. The exchange's thread checks ``isInterrupted`` after every wait.
///
/// Its state is behind a `Locked` (a pthread mutex ThreadSanitizer sees); ``interrupt()`` may run on any thread, any number of times.
final class HTTPInterruption: Sendable {
    private struct State {
        var interrupted = false
        var connection: HTTPConnection?
    }
    private let state = Locked(State())

    var isInterrupted: Bool { state.withLock { $0.interrupted } }

    /// Marks the exchange interrupted and shuts down its current connection (if any).
    func interrupt() {
        let connection = state.withLock { state in
            state.interrupted = true
            return state.connection
        }
        connection?.shutDown()
    }

    /// Makes `connection` the one ``interrupt()`` shuts down; `false` when already interrupted.
    func use(_ connection: HTTPConnection?) -> Bool {
        state.withLock { state in
            state.connection = connection
            return !state.interrupted
        }
    }
}
