import Foundation
import Testing
@testable import FileCoordination

/// A delivery that records every request as a value and answers as the default methods would.
final class RecordingDelivery: PresenterDelivery {
    let requests = Locked<[PresenterRequest]>([])

    func send(_ request: PresenterRequest, answer: (@Sendable (PresenterAnswer) -> Void)?) {
        requests.withLock { $0.append(request) }
        switch request.expectedAnswer {
        case .none: break
        case .relinquishment: answer?(.relinquished(reacquirer: ReacquirerID(value: 7)))
        case .completion: answer?(.completed(nil))
        }
    }

    var messages: [PresenterMessage] { requests.withLock { $0.map(\.message) } }
}

/// Presenter messages are values delivered through one `PresenterDelivery`; lock borrowing goes
/// by token, not by sharing an object.
@Suite("Presenter delivery")
struct PresenterDeliveryTests {
    private func messenger(_ delivery: RecordingDelivery, own: (any FilePresenter)? = nil) -> PresenterMessenger {
        PresenterMessenger(runtime: .process, ownPresenter: own, requester: LockOwner(lockTable: CoordinationRuntime.process.lockTable),
                           context: WaitContext(timeout: Polling.hangGuard, token: CancellationToken()), delivery: delivery)
    }

    @Test("a write, a read and a move produce request values with the presenter, path, URLs and expected answer")
    func everyMessageIsAValue() throws {
        let scratch = try Scratch()
        let directory = try scratch.directory("folder")
        let file = scratch.file("folder/doc.txt", contents: "x")
        let presenter = RecordingPresenter(file)
        let folderPresenter = RecordingPresenter(directory)
        let delivery = RecordingDelivery()
        try withPresenters([presenter, folderPresenter]) {
            let messenger = messenger(delivery)
            let write = ResolvedAccess.resolve([.writingIntent(with: file, options: .forDeleting)], runtime: .process)
            let reacquirers = try messenger.prepare(write)
            #expect(reacquirers.map(\.id) == [ReacquirerID(value: 7)])
            #expect(delivery.messages == [.relinquishToWriter, .accommodateDeletion, .accommodateSubitemDeletion(at: URL(fileURLWithPath: CanonicalPath.of(file, in: CoordinationRuntime.process.paths)))])
            let requests = delivery.requests.withLock { $0 }
            #expect(requests[0].presenter == PresenterID(presenter))
            #expect(requests[0].presentedPath == CanonicalPath.of(file, in: CoordinationRuntime.process.paths))
            #expect(requests[0].expectedAnswer == .relinquishment && requests[0].borrow == nil)
            #expect(requests[1].expectedAnswer == .completion && requests[1].borrow != nil, "a deletion may be answered by coordinating")
            #expect(requests[2].presenter == PresenterID(folderPresenter))
            PresenterMessenger.run(reacquirers)
            #expect(delivery.messages.last == .reacquire(ReacquirerID(value: 7)))

            delivery.requests.withLock { $0.removeAll() }
            let moved = scratch.file("folder/moved.txt")
            messenger.announceMove(from: CanonicalPath.of(file, in: CoordinationRuntime.process.paths), to: CanonicalPath.of(moved, in: CoordinationRuntime.process.paths), oldURL: file, newURL: moved)
            #expect(delivery.messages == [.itemDidMove(to: URL(fileURLWithPath: CanonicalPath.of(moved, in: CoordinationRuntime.process.paths))),
                                          .subitemDidMove(from: file, to: moved)])
        }
        #expect(presenter.log.isEmpty && folderPresenter.log.isEmpty, "nothing reached the objects: only the recording delivery was used")
    }

    @Test("the own presenter gets no request")
    func ownPresenterIsSkipped() throws {
        let scratch = try Scratch()
        let file = scratch.file("own.txt", contents: "x")
        let own = RecordingPresenter(file)
        let delivery = RecordingDelivery()
        try withPresenters([own]) {
            _ = try messenger(delivery, own: own).prepare(ResolvedAccess.resolve([.readingIntent(with: file)], runtime: .process))
        }
        #expect(delivery.messages.isEmpty)
    }

    @Test("a presenter's coordinator joins the asker's locks through the request's token, only while it is lent")
    func borrowingGoesByToken() throws {
        let scratch = try Scratch()
        let presenter = RecordingPresenter(scratch.file("doc.txt", contents: "x"))
        let asker = LockOwner(lockTable: CoordinationRuntime.process.lockTable)
        let coordinator = Coordinator(filePresenter: presenter)
        #expect(coordinator.effectiveOwner === coordinator.owner)
        let token = CoordinationRuntime.process.lending.lend(asker)
        CoordinationRuntime.process.borrowing.begin(PresenterID(presenter), token: token)
        #expect(coordinator.effectiveOwner === asker)
        CoordinationRuntime.process.lending.end(token)
        #expect(coordinator.effectiveOwner === coordinator.owner, "an ended lending lends nothing")
        CoordinationRuntime.process.borrowing.end(PresenterID(presenter), token: token)
        // A token that names nothing in this process (say, from another process) lends nothing.
        CoordinationRuntime.process.borrowing.begin(PresenterID(presenter), token: BorrowToken(value: .max))
        #expect(coordinator.effectiveOwner === coordinator.owner)
        CoordinationRuntime.process.borrowing.end(PresenterID(presenter), token: BorrowToken(value: .max))
    }

    @Test("the in-process delivery answers for a presenter that is gone as the defaults would")
    func goneMeansDefaultAnswer() {
        let answers = Box<[String]>([])
        let nobody = PresenterID(process: PresenterID.thisProcess, number: 1)
        for message in [PresenterMessage.relinquishToWriter, .saveChanges] {
            CoordinationRuntime.process.delivery.send(PresenterRequest(presenter: nobody, presentedPath: "/nowhere", message: message, borrow: nil)) { answer in
                switch answer {
                case .relinquished(let reacquirer): answers.mutate { $0.append("relinquished:\(reacquirer == nil)") }
                case .completed(let error): answers.mutate { $0.append("completed:\(error == nil)") }
                }
            }
        }
        #expect(answers.value == ["relinquished:true", "completed:true"])
    }

    @Test("a presenter that relinquishes after the asker gave up gets its reacquirer at once")
    func aLateRelinquishmentIsGivenBack() throws {
        final class Slow: FilePresenter {
            let presentedItemURL: URL?
            let presentedItemOperationQueue = OperationQueue()
            let asked = Signal(), go = Signal()
            let reacquired = Box(false)
            init(_ url: URL) { presentedItemURL = url }
            func relinquishPresentedItem(toWriter writer: @escaping @Sendable ((@Sendable () -> Void)?) -> Void) {
                asked.fire()
                _ = go.wait()
                writer { [reacquired] in reacquired.value = true }
            }
        }
        let scratch = try Scratch()
        let file = scratch.file("slow.txt", contents: "x")
        let slow = Slow(file)
        withPresenters([slow]) {
            // The asker gives up (cancelled) once the presenter has been asked, before it answers.
            let asker = Coordinator()
            let gaveUp = onThread { _ = slow.asked.wait(); asker.cancel() }
            #expect(fails(with: "cancelled") { try asker.coordinate(writingItemAt: file) { _ in } })
            #expect(gaveUp.wait())
        }
        slow.go.fire()
        slow.presentedItemOperationQueue.waitUntilAllOperationsAreFinished()
        #expect(slow.reacquired.value, "the late relinquishment was given back")
    }
}
