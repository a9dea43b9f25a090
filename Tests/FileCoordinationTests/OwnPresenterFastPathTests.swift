import Foundation
import Testing
@testable import FileCoordination

/// A coordinated access whose only concerned presenter is the coordinator's own (a document
/// saving its own file) skips the presenter round; everything any other presenter would be told
/// is still told, including by a presenter that registers while the access waits for its lock.
@Suite("Fast path of the own presenter")
struct OwnPresenterFastPathTests {
    @Test("the own presenter's coordinated write is not reported back to it by the change monitor")
    func ownWriteIsNotEchoed() throws {
        let scratch = try Scratch()
        let file = scratch.file("own.txt", contents: "a")
        let own = RecordingPresenter(file)
        let (probe, probed) = RecordingPresenter.signallingChanges(scratch.file("probe.txt", contents: "p"))
        try withPresenters([own, probe]) {
            try Coordinator(filePresenter: own).coordinate(writingItemAt: file) { url in
                try "b".write(to: url, atomically: true, encoding: .utf8)  // replaced by rename
            }
            // Reported after the kernel's reports of the write above have been read: an echo of
            // that write would have reached `own` by then.
            try "q".write(to: scratch.file("probe.txt"), atomically: false, encoding: .utf8)
            #expect(probed.wait())
        }
        #expect(own.log.isEmpty)
        #expect(try String(contentsOf: file, encoding: .utf8) == "b")
    }

    @Test("a presenter of a folder above is still told when the own presenter's coordinator writes")
    func folderPresenterIsStillTold() throws {
        let scratch = try Scratch()
        let directory = try scratch.directory("folder")
        let file = scratch.file("folder/doc.txt", contents: "x")
        let own = RecordingPresenter(file)
        let folderPresenter = RecordingPresenter(directory)
        try withPresenters([own, folderPresenter]) {
            try Coordinator(filePresenter: own).coordinate(writingItemAt: file) { url in
                try "y".write(to: url, atomically: false, encoding: .utf8)
            }
        }
        #expect(own.log.isEmpty)
        #expect(folderPresenter.log == ["subitemDidChange:doc.txt"])
    }

    @Test("a presenter that registers while a fast-path write waits for its lock is asked and told",
          arguments: [true, false])
    func presenterRegisteredWhileWaiting(withOwnPresenter: Bool) throws {
        let scratch = try Scratch()
        let file = scratch.file("doc.txt", contents: "x")
        let own = RecordingPresenter(file)
        let newcomer = RecordingPresenter(file)
        if withOwnPresenter { Coordinator.addFilePresenter(own) }
        defer { Coordinator.removeFilePresenter(own) }
        let holder = Holder.writing(file)
        // Decides its route (own presenter only, or none at all) now, then waits for the holder.
        let done = onThread {
            _ = try? Coordinator(filePresenter: withOwnPresenter ? own : nil).coordinate(writingItemAt: file) { url in
                try "y".write(to: url, atomically: false, encoding: .utf8)
            }
        }
        #expect(Polling.holds { KernelLockProbe.someoneWaits(for: file) }, "the writer never waited for the lock")
        withPresenters([newcomer]) {
            holder.release()
            #expect(done.wait())
            // (The holder, which asked nobody before the newcomer came, may tell it of its own
            // write too: only the writer that waited can have asked it to relinquish.)
            let log = newcomer.log
            #expect(log.contains("relinquishToWriter"), "\(log)")
            #expect(log.contains("reacquireFromWriter"), "\(log)")
        }
        #expect(try String(contentsOf: file, encoding: .utf8) == "y")
    }
}

/// The lock owner a presenter's coordinators share is kept between them (a document saves with a
/// new coordinator each time), but a purpose one of them set is not passed on.
@Suite("A presenter's lock owner between its coordinators")
struct PresenterOwnerKeepingTests {
    @Test("a presenter's next coordinator finds the owner of the previous one")
    func ownerIsKept() throws {
        let scratch = try Scratch()
        let file = scratch.file("doc.txt", contents: "x")
        let presenter = RecordingPresenter(file)
        let previous = WeakOwner(try Self.ownerAfterWriting(file, presenter: presenter, purpose: nil))
        // Nothing here holds the previous coordinator's owner any more: only the keeping does.
        let kept = try #require(previous.owner, "the owner was not kept")
        #expect(Coordinator(filePresenter: presenter).owner === kept)
    }

    @Test("an owner put in a group by a coordinator's purpose is not kept for the next one")
    func groupIsNotPassedOn() throws {
        let scratch = try Scratch()
        let file = scratch.file("doc.txt", contents: "x")
        let presenter = RecordingPresenter(file)
        _ = try Self.ownerAfterWriting(file, presenter: presenter, purpose: "shared-purpose")
        let next = Coordinator(filePresenter: presenter)
        #expect(next.owner.groupKey != .purpose("shared-purpose"))
        // And it blocks a coordinator of that purpose, as any other coordinator does.
        let holder = Holder.writing(file, coordinator: next)
        #expect(writeWaits(file, purpose: "shared-purpose"))
        holder.release()
    }

    /// Writes `file` with a coordinator of `presenter` (with `purpose`, if given), lets the
    /// coordinator go and returns its owner.
    private static func ownerAfterWriting(_ file: URL, presenter: RecordingPresenter, purpose: String?) throws -> LockOwner {
        let coordinator = Coordinator(filePresenter: presenter)
        if let purpose { coordinator.purposeIdentifier = purpose }
        try coordinator.coordinate(writingItemAt: file) { _ in }
        return coordinator.owner
    }
}

/// A weak reference to a lock owner (to see whether something else keeps it alive).
final class WeakOwner: @unchecked Sendable {
    // @unchecked: set once in init, only read afterwards; the referent is Sendable.
    weak var owner: LockOwner?
    init(_ owner: LockOwner) { self.owner = owner }
}
