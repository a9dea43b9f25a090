import Foundation
import Testing
import TestSupport
@testable import Ubiquity

/// `UbiquityAccount.removeItem(at:)` and `clouddocs rm`: a coordinated delete that open documents
/// and presenters hear, in this process and in others (issue 16, item 13).
@Suite("Coordinated deletes")
struct CoordinatedDeleteTests {
    @Test("a presenter is asked to accommodate the deletion and an open document closes; then the file is gone")
    @MainActor func presentersHear() async throws {
        let cloud = try ScratchCloud()
        defer { cloud.remove() }
        let inCloud = try cloud.documents().appending(path: "gone.txt")
        try Data("bye".utf8).write(to: inCloud)
        let presenter = DeletionRecorder(inCloud)
        Coordinator.addFilePresenter(presenter)
        defer { Coordinator.removeFilePresenter(presenter) }
        let document = TextDocument(fileURL: inCloud)
        try await document.openThrowing()

        try await cloud.account.removeItem(at: inCloud)
        #expect(!FileManager.default.fileExists(atPath: inCloud.path))
        #expect(presenter.deletions.withLock { $0 } == 1)
        await drain(document)
        #expect(document.documentState.contains(.closed))
    }

    @Test("a folder goes with everything inside; nothing there is itemNotFound; the blocking form works off the main actor")
    func foldersAndErrors() async throws {
        let cloud = try ScratchCloud()
        defer { cloud.remove() }
        let package = cloud.local.appending(path: "Doc.pkg", directoryHint: .isDirectory)
        try FileManager.default.createDirectory(at: package.appending(path: "inner"), withIntermediateDirectories: true)
        try Data("x".utf8).write(to: package.appending(path: "inner/x"))
        try await cloud.account.removeItem(at: package)
        #expect(!FileManager.default.fileExists(atPath: package.path))
        await #expect(throws: UbiquityError.itemNotFound(path: package.standardizedFileURL.path)) {
            try await cloud.account.removeItem(at: package)
        }
        let local = try cloud.localFile("blocking.txt")
        let account = cloud.account
        try await onOwnThread { try account.removeItemBlocking(at: local) }
        #expect(!FileManager.default.fileExists(atPath: local.path))
    }

    @Test("a presenter that refuses the deletion vetoes it: coordinationFailed, the file stays")
    func vetoed() async throws {
        let cloud = try ScratchCloud()
        defer { cloud.remove() }
        let file = try cloud.localFile("kept.txt", "kept")
        let presenter = DeletionRecorder(file, refuse: true)
        Coordinator.addFilePresenter(presenter)
        defer { Coordinator.removeFilePresenter(presenter) }
        let error = await #expect(throws: UbiquityError.self) { try await cloud.account.removeItem(at: file) }
        if case .coordinationFailed? = error {} else { Issue.record("expected coordinationFailed, not \(String(describing: error))") }
        #expect(text(at: file) == "kept")
    }

    @Test("clouddocs rm deletes a cloud document; a presenter and an open document in another process hear it first")
    func commandLineRemove() async throws {
        let cloud = try ScratchCloud()
        defer { cloud.remove() }
        let inCloud = try cloud.documents().appending(path: "shared.txt")
        try Data("shared".utf8).write(to: inCloud)
        let child = try ChildProcess(["present", inCloud.path], environment: ProcessInfo.processInfo.environment.merging(cloud.environment) { $1 },
                                     helper: "UbiquityTestHelper")
        defer { child.closeInput(); child.waitForExit() }
        #expect(child.expect("PRESENTING") == "PRESENTING")
        let run = try runExampleTool("clouddocs", ["rm", inCloud.path], in: cloud.local, environment: cloud.environment)
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.output.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: inCloud.path))
        let lines = try await onOwnThread { () -> [String] in
            var lines: [String] = []
            while !(lines.contains { $0.hasPrefix("DELETING") } && lines.contains { $0.hasPrefix("DOCUMENT-DELETING") }),
                  let line = child.readLine() { lines.append(line) }
            return lines
        }
        #expect(lines.contains("DELETING \(inCloud.path)"), "\(lines)")
        #expect(lines.contains("DOCUMENT-DELETING \(inCloud.path)"), "\(lines)")

        let missing = try runExampleTool("clouddocs", ["rm", inCloud.path], in: cloud.local, environment: cloud.environment)
        #expect(missing.status == 1)
        #expect(missing.errors.contains("There is no item at"), "\(missing.errors)")
    }
}

/// A presenter that counts requests to accommodate its item's deletion (and may refuse them).
final class DeletionRecorder: FilePresenter {
    struct Refused: Error {}
    let presentedItemURL: URL?
    let presentedItemOperationQueue: OperationQueue
    let deletions = Locked(0)
    let refuse: Bool

    init(_ url: URL, refuse: Bool = false) {
        presentedItemURL = url
        self.refuse = refuse
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        presentedItemOperationQueue = queue
    }

    func accommodatePresentedItemDeletion(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        deletions.withLock { $0 += 1 }
        completionHandler(refuse ? Refused() : nil)
    }
}
