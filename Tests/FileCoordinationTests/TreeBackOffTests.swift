import Foundation
import Synchronization
import Testing
import TestSupport
@testable import FileCoordination

/// An access of two items in one folder holds the first item's lock and must create the second's
/// lock file, which needs the folder's tree byte (shared) — while a delete of the folder in another
/// process holds that byte and waits for the first item. Waiting would deadlock both for ever (the
/// 10-minute soak of issue 15 hung that way); the access backs off instead: it gives the first
/// item back, waits for the byte holding nothing, and starts again (`HeldLocks.acquire`).
@Suite("An access that needs a folder's tree byte while holding an item backs off", .serialized)
struct TreeBackOffTests {
    @Test func aTwoItemAccessBacksOffForAFolderDeleteInAnotherProcess() throws {
        let scratch = try Scratch()
        let folder = try scratch.directory("folder")
        let first = scratch.file("folder/a.txt", contents: "a")
        let second = folder.appendingPathComponent("b-\(UUID().uuidString).txt")  // no lock file yet
        // The first item's lock file exists (the folder delete must find it and wait for it).
        try Coordinator().coordinate(writingItemAt: first) { _ in }

        let runtime = CoordinationRuntime.process
        let owner = LockOwner(lockTable: runtime.lockTable)
        let firstHeld = Signal(), deleterWaits = Signal()
        let once = Atomic<Bool>(false)
        owner.claimTakenHookForTests.withLock {
            $0 = { path in
                guard path == CanonicalPath.of(first, in: CoordinationRuntime.process.paths), !once.exchange(true, ordering: .relaxed) else { return }
                firstHeld.fire()
                _ = deleterWaits.wait()
            }
        }
        let claims = LockClaim.claims(for: [first, second].map {
            ResolvedAccess.resolveBeforeLocking([FileAccessIntent.writingIntent(with: $0)], runtime: runtime)[0]
        })
        let outcome = Locked<String>("not done")
        let done = onThread {
            do {
                // A bound for a broken build only (the deadlock), never reached when it works.
                let context = WaitContext(timeout: .seconds(60), token: CancellationToken())
                var held = try HeldLocks.acquire(claims, owner: owner, context: context, runtime: runtime)
                held.release()
                outcome.withLock { $0 = "acquired" }
            } catch {
                outcome.withLock { $0 = "\(error)" }
            }
        }
        #expect(firstHeld.wait())
        let deleter = try ChildProcess(["hold", "delete", folder.path])
        defer { deleter.closeInput(); deleter.waitForExit() }
        #expect(Polling.holds { KernelLockProbe.someoneWaits(for: first) }, "the delete never waited for the first item")
        deleterWaits.fire()
        // The access gives the first item back: the delete gets it and holds the folder.
        #expect(deleter.readLine() == "HELD")
        deleter.send("go")
        #expect(deleter.readLine() == "RELEASED")
        #expect(done.wait(seconds: 90))
        #expect(outcome.withLock { $0 } == "acquired")
    }
}
