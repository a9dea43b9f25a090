import Dispatch
import Glibc
import Synchronization

/// Checks that code runs where its documentation says it runs — on a given queue or thread, or
/// off the main queue — in the manner of swift-nio's `assertInEventLoop()`.
///
/// Every check is made in debug builds only: release builds pay nothing (`dispatchPrecondition`
/// alone would trap in release builds too, so it is wrapped). The rule (Docs/Architecture.md,
/// *Threads and queues*): a function documented to run on a given queue or thread, or with a lock
/// held, asserts it on entry.
package enum ThreadAssertions {
    /// Asserts that the caller runs on `queue` (a block queued there, or a queue targeting it).
    @inline(__always)
    package static func assertOnQueue(_ queue: DispatchQueue) {
        #if DEBUG
        dispatchPrecondition(condition: .onQueue(queue))
        #endif
    }

    /// Asserts that the caller does not run on `queue`: for code that would wait for `queue`
    /// (a `sync` onto it, or a wait for work queued there).
    @inline(__always)
    package static func assertNotOnQueue(_ queue: DispatchQueue) {
        #if DEBUG
        dispatchPrecondition(condition: .notOnQueue(queue))
        #endif
    }

    /// Asserts that the caller does not run on the main queue (main-actor code, a block queued on
    /// `DispatchQueue.main`): for code that blocks, or that waits for the main actor.
    @inline(__always)
    package static func assertNotOnMainQueue() {
        #if DEBUG
        dispatchPrecondition(condition: .notOnQueue(.main))
        #endif
    }
}

/// The one thread a component runs its own work on (a remote endpoint's, for example), recorded
/// by that thread when it starts, so the functions that must run there can assert it
/// (``assertCurrent(_:file:line:)``, debug builds). Binding costs one atomic store per thread
/// start, in every build; a check, one load and `pthread_self`, in debug builds only.
package final class ThreadIdentity: Sendable {
    /// Whose work runs on the thread, for the assertion's message.
    private let name: String
    /// The bound thread's `pthread_t` (0: not bound yet).
    private let thread = Atomic<UInt>(0)

    package init(name: String) {
        self.name = name
    }

    /// Records the calling thread as the component's thread. Call first thing on that thread.
    package func bindToCurrentThread() {
        thread.store(UInt(pthread_self()), ordering: .releasing)
    }

    /// Forgets the bound thread (it is about to end); the checks fail from then on.
    package func unbind() {
        thread.store(0, ordering: .releasing)
    }

    /// Whether the caller runs on the bound thread (false before it is bound).
    package var isCurrent: Bool {
        let bound = thread.load(ordering: .acquiring)
        return bound != 0 && pthread_equal(pthread_self(), pthread_t(bound)) != 0
    }

    /// Asserts, in debug builds, that the caller runs on the bound thread.
    @inline(__always)
    package func assertCurrent(_ what: @autoclosure () -> String = "", file: StaticString = #fileID, line: UInt = #line) {
        #if DEBUG
        assert(isCurrent, "must run on the thread of \(name)\(what().isEmpty ? "" : ": " + what())", file: file, line: line)
        #endif
    }
}
