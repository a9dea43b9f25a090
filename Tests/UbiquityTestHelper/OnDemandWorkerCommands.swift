// Worker commands for files on demand (Tests/SyncAgentTests/AgentDownloadOnAccessTests.swift):
//
//   main-thread-read <path>
//        enables files on demand, registers a presenter of <path> whose queue is the main queue,
//        prints "PRESENTING", then — on the main thread, synchronously, as an app opening a
//        document from a button would — makes a coordinated read of <path> (evicted: it waits for
//        the download). Prints "RELINQUISHED" if the presenter was asked to step aside meanwhile
//        (it cannot answer while the main thread waits), then "READ <the bytes>" and
//        "STOPPED", or "ERROR …".
import Foundation
import Ubiquity

let onDemandWorkerCommands: [String: WorkerCommand] = [
    "main-thread-read": mainThreadRead,
]

/// A presenter on the main queue that notes whether it was asked to relinquish.
private final class MainQueuePresenter: FilePresenter, @unchecked Sendable {
    // @unchecked: `url` is immutable; `relinquished` is read and written on the main queue only
    // (the presenter's queue, and the command, which runs on the main actor).
    let presentedItemURL: URL?
    let presentedItemOperationQueue = OperationQueue.main
    var relinquished = false

    init(_ url: URL) { presentedItemURL = url }

    func relinquishPresentedItem(toWriter writer: @escaping @Sendable ((@Sendable () -> Void)?) -> Void) {
        relinquished = true
        writer(nil)
    }

    func relinquishPresentedItem(toReader reader: @escaping @Sendable ((@Sendable () -> Void)?) -> Void) {
        relinquished = true
        reader(nil)
    }
}

@MainActor
private func mainThreadRead(_ arguments: [String]) async throws {
    guard let path = arguments.first else { throw WorkerUsage("main-thread-read <path>") }
    let url = URL(fileURLWithPath: path)
    FilesOnDemand.enableForSharedAccount()
    let presenter = MainQueuePresenter(url)
    Coordinator.addFilePresenter(presenter)
    defer { Coordinator.removeFilePresenter(presenter) }
    say("PRESENTING")
    let bytes = try Coordinator().coordinate(readingItemAt: url) { url in try Data(contentsOf: url) }
    if presenter.relinquished { say("RELINQUISHED") }
    say("READ " + String(decoding: bytes, as: UTF8.self))
    say("STOPPED")
}
