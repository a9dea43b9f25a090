import Foundation
import Glibc

extension PresenterMessenger {
    /// `ask(requests, lending:)` for an asker that **holds no lock** (before locking), asked again
    /// while a presenter answers with an upgrade conflict.
    ///
    /// A presenter that saves for the request may find its own document reloading under a read
    /// of the document's lock owner while another process's save upgrades its read at the same
    /// moment: one of the two upgrades is refused with `.wouldDeadlock` (the lock protocol's
    /// upgrade marker) so that neither waits for the other for ever. The refused save is not the
    /// presenter's answer to the asker — nothing is wrong with the document; it only had to let
    /// the other save go first. The asker holds nothing, so it cannot be what the presenter's
    /// save waits for: it asks again, after a short pause that doubles each time (0.5 ms up to
    /// 16 ms), until the presenter answers otherwise. How long: as the asker's context allows
    /// (its timeout, its cancellation) or, without a timeout, `RemotePresence.answerLimit` in all;
    /// then the last refusal is the answer.
    ///
    /// Presenters that already saved have nothing left to save when asked again: they answer at
    /// once.
    func askRetryingUpgradeConflicts(_ requests: [(PresenterAddress, PresenterMessage)], lending lends: Bool = true) throws(CoordinationError) {
        let giveUp = context.deadline == nil
            ? ContinuousClock.now.advanced(by: .milliseconds(remote.answerLimitMilliseconds)) : nil
        var pause = 500  // microseconds
        while true {
            do {
                try ask(requests, lending: lends)
                return
            } catch .presenterFailed(let error) where Self.isUpgradeConflict(error) {
                if let giveUp, ContinuousClock.now >= giveUp { throw .presenterFailed(error) }
                try context.check()
                usleep(useconds_t(pause))
                pause = min(pause * 2, 16_000)
            }
        }
    }

    /// True for a presenter's refusal that is an upgrade conflict of its own save: the
    /// coordinator's `.wouldDeadlock` from this process's presenter, or its bridged form (same
    /// domain and code) from another process's.
    static func isUpgradeConflict(_ error: any Error) -> Bool {
        if case CoordinationError.wouldDeadlock? = error as? CoordinationError { return true }
        let bridged = error as NSError
        return bridged.domain == wouldDeadlockBridged.domain && bridged.code == wouldDeadlockBridged.code
    }

    /// `.wouldDeadlock` as an `NSError` (what another process's presenter answer carries).
    private static let wouldDeadlockBridged: (domain: String, code: Int) = {
        let bridged = CoordinationError.wouldDeadlock(URL(fileURLWithPath: "/")) as NSError
        return (bridged.domain, bridged.code)
    }()
}
