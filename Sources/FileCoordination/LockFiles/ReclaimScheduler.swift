import Foundation
import Glibc
import SystemSupport
import Synchronization

/// Runs `LockFileReclaimer` passes by itself, on one background thread per lock directory, so lock
/// files never pile up and nobody has to clean up by hand.
///
/// A pass (at most `passBudget` mirror folders) runs
/// - `settleDelay` after the first coordination of a process (cleaning up after earlier ones), and
///   after any later burst of coordinations — so items deleted meanwhile lose their lock files
///   about a second after the process goes quiet or keeps going;
/// - as soon as this process has created `creationsPerPass` lock files since the last pass.
/// Passes follow each other at once while they reclaim something, and stop after one that
/// reclaims nothing. The hot path only reads one atomic flag (`noteActivity`).
final class ReclaimScheduler: Sendable {
    static let creationsPerPass = 128
    static let passBudget = 256
    static let settleDelay: Duration = .seconds(1)

    let reclaimer: LockFileReclaimer

    private struct State {
        var creations = 0
        var activity = false
        var started = false
        var passes = 0
    }
    private let state = Locked(State())
    /// Set once activity was reported since the last pass; read without a lock on the hot path.
    private let activityNoted = Atomic<Bool>(false)
    private let condition = NSCondition()

    private init(directory: LockDirectory) {
        reclaimer = LockFileReclaimer(directory: directory)
    }

    /// Process-wide, not per `CoordinationRuntime`: one scheduler (one reclaiming thread) per lock
    /// directory and process, shared by every runtime that uses that directory.
    private static let schedulers = Locked<[String: ReclaimScheduler]>([:])

    /// The scheduler of `directory` (one per lock directory and process).
    static func of(_ directory: LockDirectory) -> ReclaimScheduler {
        schedulers.withLock { schedulers in
            if let scheduler = schedulers[directory.path] { return scheduler }
            let scheduler = ReclaimScheduler(directory: directory)
            schedulers[directory.path] = scheduler
            return scheduler
        }
    }

    /// A coordination looked up a lock file: a pass will follow once things settle.
    @inline(__always)
    func noteActivity() {
        guard !activityNoted.load(ordering: .relaxed) else { return }
        activityNoted.store(true, ordering: .relaxed)
        wake { $0.activity = true }
    }

    /// This process created a lock file.
    func noteCreation() {
        wake { $0.creations += 1 }
    }

    /// How many passes ran (for tests).
    var passes: Int { state.withLock { $0.passes } }

    private func wake(_ change: (inout State) -> Void) {
        let start = state.withLock { state -> Bool in
            change(&state)
            defer { state.started = true }
            return !state.started
        }
        if start {
            let thread = Thread { [self] in self.run() }
            thread.name = "CloudDocuments lock-file reclaimer"
            thread.start()
        }
        condition.lock()
        condition.signal()
        condition.unlock()
    }

    private var isDue: Bool {
        state.withLock { $0.creations >= Self.creationsPerPass }
    }

    private func run() {
        // Tidying can wait: a pass never preempts a thread that holds a lock (see
        // BackgroundThreadScheduling).
        BackgroundThreadScheduling.makeCurrentThreadBackground()
        while true {
            condition.lock()
            while !state.withLock({ $0.activity || $0.creations >= Self.creationsPerPass }) {
                condition.wait()
            }
            // Let a burst of activity settle, unless enough lock files were created to go at once.
            let deadline = Date(timeIntervalSinceNow: Double(Self.settleDelay.components.seconds))
            while !isDue, condition.wait(until: deadline) {}
            condition.unlock()

            state.withLock { state in
                state.activity = false
                state.creations = 0
            }
            activityNoted.store(false, ordering: .relaxed)
            while true {
                let result = reclaimer.pass(budget: Self.passBudget)
                state.withLock { $0.passes += 1 }
                if result.reclaimedFiles + result.removedFolders == 0 { break }
            }
        }
    }
}
