import Dispatch

/// Tells whether the caller runs on the main dispatch queue: main-actor code, blocks queued on
/// `DispatchQueue.main`, and the main thread of a program that does not drain the main queue
/// (libdispatch counts it as the main queue).
///
/// `Thread.isMainThread` is not the test: on Linux, main-actor jobs of an `async` `main` (and
/// under `swift test`) are drained from the main queue by a thread that is not the process's
/// first thread. CloudDocuments' `UndoManager.groupsByEvent` groups what runs on the main queue;
/// a coordinator records when the main queue waits for another process (a document asked to save
/// there needs it: Docs/RemotePresenters.md, *Save requests and wait cycles*).
package enum MainQueueCheck {
    /// A queue-specific value set on the main queue once, on first use (Swift's lazy
    /// initialization of a static is thread-safe).
    private static let key: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    /// Whether the current code runs on the main queue. Any thread.
    package static var isMainQueue: Bool { DispatchQueue.getSpecific(key: key) == true }
}
