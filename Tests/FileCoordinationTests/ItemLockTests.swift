import Foundation
import Testing
@testable import FileCoordination

/// `ItemLock`, the one value for "what is locked": as a coordination's request (`LockClaim`) and as
/// this thread's record (`ThreadClaims`).
@Suite("Item locks: claims and the thread's record")
struct ItemLockTests {
    @Test func theClaimsOfSeveralAccessesAreMergedPerPathInPathOrder() {
        let a = URL(fileURLWithPath: "/tmp/item-lock-tests/a.txt")
        let b = URL(fileURLWithPath: "/tmp/item-lock-tests/b")
        let accesses = ResolvedAccess.resolveBeforeLocking([
            .writingIntent(with: b, options: .forDeleting),
            .readingIntent(with: a),
            .writingIntent(with: a),
        ], runtime: .process)
        let claims = LockClaim.claims(for: accesses)
        #expect(claims.map(\.lock) == [
            ItemLock(path: CanonicalPath.of(a, in: CoordinationRuntime.process.paths), access: .write),  // read and written: written
            ItemLock(path: CanonicalPath.of(b, in: CoordinationRuntime.process.paths), access: .write),
        ])
        #expect(claims.map(\.subtreeIfDirectory) == [false, true])
    }

    @Test func aReadClaimStaysARead() {
        let a = URL(fileURLWithPath: "/tmp/item-lock-tests/a.txt")
        let claims = LockClaim.claims(for: ResolvedAccess.resolveBeforeLocking([.readingIntent(with: a)], runtime: .process))
        #expect(claims == [LockClaim(lock: ItemLock(path: CanonicalPath.of(a, in: CoordinationRuntime.process.paths), access: .read), subtreeIfDirectory: false)])
    }

    /// A tree lock held through one owner makes a wait for anything inside, through another owner,
    /// a deadlock; a read held conflicts only with a wait for a write; one's own locks never count.
    @Test func theThreadsRecordTellsWhichWaitsWouldDeadlock() throws {
        let holder = LockOwner(lockTable: CoordinationRuntime.process.lockTable), other = LockOwner(lockTable: CoordinationRuntime.process.lockTable)
        // The thread's claims are its accessor frames' locks.
        AccessorFrames.push(Coordinator(), owner: holder,
                            locks: [ItemLock(path: "/d", access: .tree), ItemLock(path: "/r.txt", access: .read)])
        defer { AccessorFrames.pop() }
        func safe(_ path: String, exclusive: Bool, subtree: Bool = false, by owner: LockOwner) -> Bool {
            (try? ThreadClaims.checkWaitIsSafe(path: path, exclusive: exclusive, subtree: subtree, group: owner.groupKey)) != nil
        }
        #expect(!safe("/d/x.txt", exclusive: false, by: other))
        #expect(!safe("/d", exclusive: false, by: other))
        #expect(!safe("/", exclusive: false, subtree: true, by: other))
        #expect(safe("/e/x.txt", exclusive: true, by: other))
        #expect(safe("/r.txt", exclusive: false, by: other))
        #expect(!safe("/r.txt", exclusive: true, by: other))
        #expect(safe("/d/x.txt", exclusive: true, by: holder))
        #expect(!ThreadClaims.holdsNothing)
    }

    /// The fast path's single lock counts as a claim like the locks of a full access.
    @Test func aSingleLockFrameIsAClaimToo() {
        let holder = LockOwner(lockTable: CoordinationRuntime.process.lockTable), other = LockOwner(lockTable: CoordinationRuntime.process.lockTable)
        #expect(ThreadClaims.holdsNothing)
        AccessorFrames.push(Coordinator(), owner: holder, lock: ItemLock(path: "/w.txt", access: .write))
        defer { AccessorFrames.pop() }
        #expect((try? ThreadClaims.checkWaitIsSafe(path: "/w.txt", exclusive: false, subtree: false, group: other.groupKey)) == nil)
        #expect((try? ThreadClaims.checkWaitIsSafe(path: "/w.txt", exclusive: false, subtree: false, group: holder.groupKey)) != nil)
    }
}
