import ExampleDocuments
import Foundation
import Ubiquity

/// The demo's iCloud step: the open document is moved into a ubiquity container's `Documents`
/// folder (`setUbiquitous`, a coordinated move the document follows), and a live metadata query
/// in another process — what an app's document browser runs — sees it arrive.
///
/// The container root is a folder of the demo's own, configured in code here and passed to the
/// other process on its command line; a real app reads it from the user's configuration
/// (`UbiquityAccount.shared`, Docs/Ubiquity.md).
@MainActor
enum CloudStep {
    static let watcherFlag = "--cloud-watcher"
    static let containerIdentifier = "com.example.clouddocs-demo"

    static func moveToCloud(_ notes: TextDocument, root: URL, step: Int) async throws {
        Narration.step(step, "Moving notes.txt to the cloud: a live query in the second process sees it arrive")
        let account = UbiquityAccount(configuration: UbiquityConfiguration(
            root: root, containerIdentifiers: [containerIdentifier], provider: .none))
        let container = try account.container()
        Narration.event("ubiquity container \(containerIdentifier): \(container.documentsURL.path)")

        let watcher = try await SecondProcess.launch([watcherFlag, root.path, containerIdentifier])
        let source = notes.fileURL
        let destination = container.documentsURL.appendingPathComponent(source.lastPathComponent)
        try await account.setUbiquitous(true, itemAt: source, destinationURL: destination)
        Narration.event("setUbiquitous(true, itemAt: notes.txt, destinationURL: …/Documents/notes.txt): moved")
        if await fileURL(of: notes, becomes: destination) {
            Narration.event("the open document followed: its fileURL is now …/\(containerIdentifier)/Documents/notes.txt")
        } else {
            Narration.event("the open document did not follow the move: its fileURL is still \(notes.fileURL.path)")
        }
        let status = account.status(ofItemAt: destination)
        Narration.event("isUbiquitousItem: \(account.isUbiquitousItem(at: destination)), downloading status: \(status.downloadingStatus.rawValue.replacingOccurrences(of: "NSURLUbiquitousItemDownloadingStatus", with: ""))")
        await watcher.relayUntilReadyOrDone()  // until the other process's query has seen it
        await watcher.goOn()
    }

    /// Whether the document's `fileURL` became `destination`, once the move's message has been
    /// handled. No clock: the coordinated move of `setUbiquitous` tells the document's presenter
    /// (`item(at:didMoveTo:)`) before it returns, which queues `presentedItemDidMove(to:)` on the
    /// document's serial `presentedItemOperationQueue`; an operation added to that queue after
    /// the move runs after the message, so when it has run the document has followed (or never
    /// will).
    private static func fileURL(of document: TextDocument, becomes destination: URL) async -> Bool {
        await withCheckedContinuation { (handled: CheckedContinuation<Void, Never>) in
            document.presentedItemOperationQueue.addOperation { handled.resume() }
        }
        return document.fileURL.standardizedFileURL.path == destination.standardizedFileURL.path
    }

    // MARK: The second process

    /// Runs the second process's live query of the container's documents: says `READY` once it
    /// has gathered, prints the first document that appears and says `READY` again, then stops
    /// when told to go on (a line on stdin, or its end) and says `DONE`.
    nonisolated static func runWatcher(root: URL, identifier: String) -> Int32 {
        let account = UbiquityAccount(configuration: UbiquityConfiguration(root: root, containerIdentifiers: [identifier], provider: .none))
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let query = MetadataQuery(scopes: [.ubiquitousDocuments], predicate: .all,
                                  notificationBatchingInterval: 0, operationQueue: queue, account: account) { event in
            switch event {
            case .didFinishGathering:
                say("live query of the container's documents started (gathered: nothing yet)")
                say("READY")
            case .didUpdate(let update):
                guard let item = update.added.first else { break }
                say("appeared in my live query: \(item.name) (a did-update notification, added)")
                say("READY")
            default:
                break
            }
        }
        do { try query.start() } catch {
            say("could not start the query: \(error.localizedDescription)")
            say("DONE")
            return 1
        }
        _ = readLine()  // told to go on (or the first process went away)
        query.stop()
        say("DONE")
        return 0
    }

    private nonisolated static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}
