// Worker commands for the container tests (Tests/UbiquityTests/ContainerMoveTests.swift):
//
//   present <path>
//        opens a CloudDocument at <path> and registers a second, plain presenter of it; prints
//        "PRESENTING", then "MOVED <new path>" when the presenter hears presentedItemDidMove and
//        "DOCUMENT-MOVED <fileURL path>" when the document has followed; "DELETING <path>" when
//        the presenter is asked to accommodate the item's deletion and "DOCUMENT-DELETING <path>"
//        when the document is. Stops at end of stdin ("STOPPED").
//   identity-watch
//        observes the identity-did-change notification of the shared account (configured by
//        this process's environment); prints "WATCHING <token or nil>", then
//        "CHANGED <token or nil>" per notification. Stops at end of stdin ("STOPPED").
import Foundation
import Ubiquity

let containerWorkerCommands: [String: WorkerCommand] = [
    "present": present,
    "identity-watch": identityWatch,
]

@MainActor
private func present(_ arguments: [String]) async throws {
    guard let path = arguments.first else { throw WorkerUsage("present <path>") }
    let url = URL(fileURLWithPath: path)
    let document = WorkerDocument(fileURL: url)
    try await document.openThrowing()
    let presenter = MovePrinter(url)
    Coordinator.addFilePresenter(presenter)
    say("PRESENTING")
    await endOfStandardInput()
    Coordinator.removeFilePresenter(presenter)
    _ = await document.close()
    say("STOPPED")
}

@MainActor
private func identityWatch(_ arguments: [String]) async throws {
    let account = UbiquityAccount.shared
    let observation = account.beginObservingIdentityChanges()
    let center = NotificationCenter.default.addObserver(forName: UbiquityAccount.identityDidChangeNotification,
                                                        object: account, queue: nil) { _ in
        say("CHANGED \(account.identityToken?.rawValue ?? "nil")")
    }
    say("WATCHING \(account.identityToken?.rawValue ?? "nil")")
    await endOfStandardInput()
    NotificationCenter.default.removeObserver(center)
    observation.cancel()
    say("STOPPED")
}

struct WorkerUsage: Error, CustomStringConvertible {
    let description: String
    init(_ usage: String) { description = "usage: UbiquityTestHelper \(usage)" }
}

/// Suspends until standard input ends, reading it on a thread of its own (the main actor stays
/// free for the document's presenter messages).
func endOfStandardInput() async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        Thread.detachNewThread {
            while readLine() != nil {}
            continuation.resume()
        }
    }
}

/// A document of plain bytes that prints where it went when it follows a move.
final class WorkerDocument: CloudDocument {
    var bytes = Data()

    override func contents(forType typeName: String) throws -> DocumentContents { .data(bytes) }

    override func load(fromContents contents: DocumentContents, ofType typeName: String?) throws {
        bytes = contents.data ?? Data()
    }

    nonisolated override func presentedItemDidMove(to newURL: URL) {
        super.presentedItemDidMove(to: newURL)
        say("DOCUMENT-MOVED \(fileURL.path)")
    }

    nonisolated override func accommodatePresentedItemDeletion(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        say("DOCUMENT-DELETING \(fileURL.path)")
        super.accommodatePresentedItemDeletion(completionHandler: completionHandler)
    }
}

/// A plain presenter that prints its moves.
final class MovePrinter: FilePresenter {
    let presentedItemURL: URL?
    let presentedItemOperationQueue: OperationQueue

    init(_ url: URL) {
        presentedItemURL = url
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        presentedItemOperationQueue = queue
    }

    func presentedItemDidMove(to newURL: URL) { say("MOVED \(newURL.path)") }

    func accommodatePresentedItemDeletion(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        say("DELETING \(presentedItemURL?.path ?? "-")")
        completionHandler(nil)
    }
}
