import Foundation
import Testing
import TestSupport
@testable import Ubiquity

/// `setUbiquitous(_:itemAt:destinationURL:)`: a coordinated move into and out of containers.
@Suite("Moving items into and out of the cloud")
struct ContainerMoveTests {
    @Test("a file moves into the container's Documents folder and back out, bytes intact")
    func roundTrip() async throws {
        let cloud = try ScratchCloud()
        defer { cloud.remove() }
        let local = try cloud.localFile("note.txt", "hello")
        let inCloud = try cloud.documents().appending(path: "note.txt")
        try await cloud.account.setUbiquitous(true, itemAt: local, destinationURL: inCloud)
        #expect(text(at: inCloud) == "hello")
        #expect(!FileManager.default.fileExists(atPath: local.path))
        #expect(cloud.account.isUbiquitousItem(at: inCloud))

        let back = cloud.local.appending(path: "back.txt")
        try await cloud.account.setUbiquitous(false, itemAt: inCloud, destinationURL: back)
        #expect(text(at: back) == "hello")
        #expect(!cloud.account.isUbiquitousItem(at: back))
        #expect(!FileManager.default.fileExists(atPath: inCloud.path))
    }

    @Test("a folder moves with everything inside it; the synchronous form works off the main actor")
    func folderMovesSynchronously() async throws {
        let cloud = try ScratchCloud()
        defer { cloud.remove() }
        let folder = cloud.local.appending(path: "Project.pkg", directoryHint: .isDirectory)
        try FileManager.default.createDirectory(at: folder.appending(path: "inner"), withIntermediateDirectories: true)
        try Data("x".utf8).write(to: folder.appending(path: "inner/file"))
        let destination = try cloud.documents().appending(path: "Project.pkg", directoryHint: .isDirectory)
        let account = cloud.account
        try await onOwnThread { try account.setUbiquitousBlocking(true, itemAt: folder, destinationURL: destination) }
        #expect(text(at: destination.appending(path: "inner/file")) == "x")
    }

    @Test("odd names move unchanged: spaces, accents, emoji, %, #, ?, a leading dot, a 255-byte name",
          arguments: ["with space.txt", "café ünïcode.txt", "🌧 cloud.txt", "100% #1?.txt", ".hidden",
                      String(repeating: "é", count: 127) + "x"])
    func oddNames(_ name: String) async throws {
        let cloud = try ScratchCloud()
        defer { cloud.remove() }
        #expect(name.utf8.count <= 255)
        let local = try cloud.localFile(name, name)
        let inCloud = try cloud.documents().appending(path: name, directoryHint: .notDirectory)
        try await cloud.account.setUbiquitous(true, itemAt: local, destinationURL: inCloud)
        #expect(try FileManager.default.contentsOfDirectory(atPath: cloud.documents().path) == [name])
        #expect(text(at: inCloud) == name)
        let back = cloud.local.appending(path: name, directoryHint: .notDirectory)
        try await cloud.account.setUbiquitous(false, itemAt: inCloud, destinationURL: back)
        #expect(text(at: back) == name)
    }

    @Test("a 255-byte name is the longest: one more byte fails with ENAMETOOLONG before anything moves")
    func nameTooLong() async throws {
        let cloud = try ScratchCloud()
        defer { cloud.remove() }
        let local = try cloud.localFile("short.txt")
        let longName = String(repeating: "a", count: 256)
        let destination = try cloud.documents().appending(path: longName)
        await #expect(throws: UbiquityError.moveFailed(source: local.path, destination: destination.path, errno: .fileNameTooLong)) {
            try await cloud.account.setUbiquitous(true, itemAt: local, destinationURL: destination)
        }
        #expect(text(at: local) == "text")
    }

    @Test("a name clash is a typed error and nothing is replaced, in both directions")
    func nameClash() async throws {
        let cloud = try ScratchCloud()
        defer { cloud.remove() }
        let local = try cloud.localFile("same.txt", "local")
        let inCloud = try cloud.documents().appending(path: "same.txt")
        try Data("cloud".utf8).write(to: inCloud)
        await #expect(throws: UbiquityError.destinationExists(path: inCloud.path)) {
            try await cloud.account.setUbiquitous(true, itemAt: local, destinationURL: inCloud)
        }
        await #expect(throws: UbiquityError.destinationExists(path: local.path)) {
            try await cloud.account.setUbiquitous(false, itemAt: inCloud, destinationURL: local)
        }
        #expect(text(at: local) == "local")
        #expect(text(at: inCloud) == "cloud")
    }

    @Test("the clash check is the rename's own: a destination that appears after the check is neither replaced nor removed — across file systems (tmpfs) too",
          arguments: [nil, "1m"] as [String?])
    func clashInsideTheCoordinatedWrite(tmpfsSize: String?) throws {
        if tmpfsSize != nil && !SmallTmpfs.isAvailable { return }  // mount(2) refused: the same-file-system case still runs
        let cloud = try ScratchCloud(tmpfsSize: tmpfsSize)
        defer { cloud.remove() }
        let local = try cloud.localFile("late.txt", "local")
        let destination = try cloud.documents().appending(path: "late.txt")
        try Data("arrived meanwhile".utf8).write(to: destination)
        #expect(throws: UbiquitousMoveFailure.self) {
            try UbiquityAccount.performMove(from: local, to: destination, coordinator: Coordinator())
        }
        #expect(text(at: destination) == "arrived meanwhile")
        #expect(text(at: local) == "local")
    }

    @Test("Apple's rules: into the cloud needs a destination in a container, out of it one outside; the source must exist")
    func destinationRules() async throws {
        let cloud = try ScratchCloud()
        defer { cloud.remove() }
        let local = try cloud.localFile("a.txt")
        let elsewhere = cloud.local.appending(path: "b.txt")
        await #expect(throws: UbiquityError.destinationNotInContainer(path: elsewhere.path)) {
            try await cloud.account.setUbiquitous(true, itemAt: local, destinationURL: elsewhere)
        }
        let inCloud = try cloud.documents().appending(path: "a.txt")
        await #expect(throws: UbiquityError.itemNotInContainer(path: local.path)) {
            try await cloud.account.setUbiquitous(false, itemAt: local, destinationURL: elsewhere)
        }
        try await cloud.account.setUbiquitous(true, itemAt: local, destinationURL: inCloud)
        let otherContainer = try cloud.account.container(identifier: "com.example.other").documentsURL.appending(path: "a.txt")
        await #expect(throws: UbiquityError.destinationInContainer(path: otherContainer.path)) {
            try await cloud.account.setUbiquitous(false, itemAt: inCloud, destinationURL: otherContainer)
        }
        let missing = cloud.local.appending(path: "missing.txt")
        await #expect(throws: UbiquityError.itemNotFound(path: missing.path)) {
            try await cloud.account.setUbiquitous(true, itemAt: missing, destinationURL: try cloud.documents().appending(path: "m.txt"))
        }
        // Between containers: still "into the cloud".
        try await cloud.account.setUbiquitous(true, itemAt: inCloud, destinationURL: otherContainer)
        #expect(cloud.account.containerOfItem(at: otherContainer)?.identifier == "com.example.other")
    }

    @Test("signed out: moves fail with notSignedIn and nothing moves")
    func signedOut() async throws {
        let cloud = try ScratchCloud()
        defer { cloud.remove() }
        let local = try cloud.localFile("a.txt")
        let signedOut = UbiquityAccount(configuration: UbiquityConfiguration(root: nil, containerIdentifiers: ["com.example.notes"]))
        #expect(signedOut.url(forUbiquityContainerIdentifier: nil) == nil)
        #expect(signedOut.identityToken == nil)
        await #expect(throws: UbiquityError.notSignedIn) {
            try await signedOut.setUbiquitous(true, itemAt: local, destinationURL: cloud.root.appending(path: "com.example.notes/Documents/a.txt"))
        }
        #expect(throws: UbiquityError.notSignedIn) { try signedOut.evictUbiquitousItem(at: local) }
        #expect(!signedOut.isUbiquitousItem(at: local))
        #expect(text(at: local) == "text")
    }

    @Test("a presenter of the item in this process gets presentedItemDidMove with the new URL")
    func presenterFollows() async throws {
        let cloud = try ScratchCloud()
        defer { cloud.remove() }
        let local = try cloud.localFile("presented.txt")
        let presenter = MoveRecorder(local)
        Coordinator.addFilePresenter(presenter)
        defer { Coordinator.removeFilePresenter(presenter) }
        let inCloud = try cloud.documents().appending(path: "presented.txt")
        try await cloud.account.setUbiquitous(true, itemAt: local, destinationURL: inCloud)
        let arrived = try await onOwnThread { presenter.moved.wait(timeout: .now() + 30) == .success }
        #expect(arrived)
        #expect(presenter.moves.withLock { $0.map(\.standardizedFileURL.path) } == [inCloud.standardizedFileURL.path])
    }

    @Test("an open CloudDocument follows the move: its fileURL is the new place and it saves there")
    @MainActor func openDocumentFollows() async throws {
        let cloud = try ScratchCloud()
        defer { cloud.remove() }
        let local = try cloud.localFile("open.txt", "before")
        let document = TextDocument(fileURL: local)
        try await document.openThrowing()
        let inCloud = try cloud.documents().appending(path: "open.txt")
        try await cloud.account.setUbiquitous(true, itemAt: local, destinationURL: inCloud)
        await drain(document)
        #expect(document.fileURL.standardizedFileURL.path == inCloud.standardizedFileURL.path)
        document.text = "after"
        document.updateChangeCount(.done)
        try await document.saveThrowing(to: document.fileURL, for: .forOverwriting)
        #expect(text(at: inCloud) == "after")
        #expect(!FileManager.default.fileExists(atPath: local.path))
        try await document.closeThrowing()
    }

    @Test("a presenter and an open document in another process follow a move into the cloud and back")
    func otherProcessFollows() async throws {
        let cloud = try ScratchCloud()
        defer { cloud.remove() }
        let local = try cloud.localFile("shared.txt", "shared")
        let child = try ChildProcess(["present", local.path], environment: ProcessInfo.processInfo.environment.merging(cloud.environment) { $1 },
                                     helper: "UbiquityTestHelper")
        defer { child.closeInput(); child.waitForExit() }
        #expect(child.expect("PRESENTING") == "PRESENTING")
        let inCloud = try cloud.documents().appending(path: "shared.txt")
        try await cloud.account.setUbiquitous(true, itemAt: local, destinationURL: inCloud)
        // The presenter's and the document's reports of one move, in either order.
        let bothMoved = { @Sendable in
            try await onOwnThread { () -> [String] in
                var lines: [String] = []
                while !(lines.contains { $0.hasPrefix("MOVED") } && lines.contains { $0.hasPrefix("DOCUMENT-MOVED") }),
                      let line = child.readLine() { lines.append(line) }
                return lines
            }
        }
        var lines = try await bothMoved()
        #expect(lines.contains("MOVED \(inCloud.path)"), "\(lines)")
        #expect(lines.contains("DOCUMENT-MOVED \(inCloud.path)"), "\(lines)")

        let back = cloud.local.appending(path: "back.txt")
        try await cloud.account.setUbiquitous(false, itemAt: inCloud, destinationURL: back)
        lines = try await bothMoved()
        #expect(lines.contains("MOVED \(back.path)"), "\(lines)")
        #expect(lines.contains("DOCUMENT-MOVED \(back.path)"), "\(lines)")
    }
}

/// Moves between file systems: the container root on a small tmpfs, the local folder on /tmp.
@Suite("Moving across file systems", .enabled(if: SmallTmpfs.isAvailable, Comment(rawValue: SmallTmpfs.unavailableMessage)))
struct CrossFileSystemMoveTests {
    @Test("across file systems the item is copied then removed; a folder too; presenters follow")
    func copiesAcross() async throws {
        let cloud = try ScratchCloud(tmpfsSize: "1m")
        defer { cloud.remove() }
        let local = try cloud.localFile("across.txt", "across")
        let presenter = MoveRecorder(local)
        Coordinator.addFilePresenter(presenter)
        defer { Coordinator.removeFilePresenter(presenter) }
        let inCloud = try cloud.documents().appending(path: "across.txt")
        try await cloud.account.setUbiquitous(true, itemAt: local, destinationURL: inCloud)
        #expect(text(at: inCloud) == "across")
        #expect(!FileManager.default.fileExists(atPath: local.path))
        #expect(try await onOwnThread { presenter.moved.wait(timeout: .now() + 30) == .success })

        let folder = try cloud.documents().appending(path: "Bundle", directoryHint: .isDirectory)
        try FileManager.default.createDirectory(at: folder.appending(path: "a/b"), withIntermediateDirectories: true)
        try Data("deep".utf8).write(to: folder.appending(path: "a/b/c.txt"))
        let localFolder = cloud.local.appending(path: "Bundle", directoryHint: .isDirectory)
        try await cloud.account.setUbiquitous(false, itemAt: folder, destinationURL: localFolder)
        #expect(text(at: localFolder.appending(path: "a/b/c.txt")) == "deep")
        #expect(!FileManager.default.fileExists(atPath: folder.path))
    }

    @Test("a file whose original cannot be removed after the copy (immutable): moveFailed, and the copy is taken back",
          .enabled(if: geteuid() == 0, "needs root for chattr +i"))
    func originalCannotBeRemoved() async throws {
        let cloud = try ScratchCloud(tmpfsSize: "1m")
        defer { cloud.remove() }
        let local = try cloud.localFile("stuck.txt", "stuck")
        let chattr = URL(fileURLWithPath: "/usr/bin/chattr")
        try #require(try ToolProcess.run(chattr, ["+i", local.path]).status == 0, "chattr +i is needed")
        defer { _ = try? ToolProcess.run(chattr, ["-i", local.path]) }
        let inCloud = try cloud.documents().appending(path: "stuck.txt")
        await #expect(throws: UbiquityError.self) {
            try await cloud.account.setUbiquitous(true, itemAt: local, destinationURL: inCloud)
        }
        #expect(text(at: local) == "stuck")
        #expect(!FileManager.default.fileExists(atPath: inCloud.path), "the item is in one place: where it was")
    }

    @Test("a destination file system that fills up: moveFailed with ENOSPC, the item stays, no partial copy")
    func destinationFull() async throws {
        let cloud = try ScratchCloud(tmpfsSize: "64k")
        defer { cloud.remove() }
        let local = try cloud.localFile("big.bin", String(repeating: "x", count: 256 * 1024))
        let inCloud = try cloud.documents().appending(path: "big.bin")
        await #expect(throws: UbiquityError.moveFailed(source: local.path, destination: inCloud.path, errno: .noSpace)) {
            try await cloud.account.setUbiquitous(true, itemAt: local, destinationURL: inCloud)
        }
        #expect(text(at: local)?.count == 256 * 1024)
        #expect(!FileManager.default.fileExists(atPath: inCloud.path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: cloud.documents().path) == [], "no temporary copy left either")
    }
}
