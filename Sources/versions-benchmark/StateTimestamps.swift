import BenchmarkSupport
import CloudDocuments
import Foundation

/// Records when a document's state-change notification first announces a state matching what
/// is awaited, as the app sees it: the observer runs synchronously in the posting (on the main
/// actor), and takes the time there.
///
/// `@unchecked Sendable`: `awaited` and `reachedAt` are only read and written under `lock`.
final class StateTimestamps: @unchecked Sendable {
    private let lock = NSLock()
    private var awaited: (@Sendable (DocumentState) -> Bool)?
    private var reachedAt: UInt64?
    private var token: (any NSObjectProtocol)?

    init(_ document: CloudDocument) {
        token = NotificationCenter.default.addObserver(forName: CloudDocument.stateChangedNotification,
                                                       object: document, queue: nil) { [weak self] note in
            guard let self, let state = note.userInfo?[CloudDocument.stateUserInfoKey] as? DocumentState else { return }
            let time = Measure.now()
            self.lock.withLock {
                if self.reachedAt == nil, let awaited = self.awaited, awaited(state) { self.reachedAt = time }
            }
        }
    }

    deinit {
        if let token { NotificationCenter.default.removeObserver(token) }
    }

    /// Starts waiting for a state matching `predicate` (forgets an earlier one).
    func arm(_ predicate: @escaping @Sendable (DocumentState) -> Bool) {
        lock.withLock {
            awaited = predicate
            reachedAt = nil
        }
    }

    /// When the awaited state was announced, waiting (without blocking the main actor) until
    /// `timeout` seconds have passed; `nil` if it was not.
    @MainActor
    func reached(within timeout: Double) async -> UInt64? {
        let deadline = Measure.now() + UInt64(timeout * 1e9)
        while Measure.now() < deadline {
            if let time = lock.withLock({ reachedAt }) { return time }
            try? await Task.sleep(for: .milliseconds(1))
        }
        return lock.withLock { reachedAt }
    }
}
