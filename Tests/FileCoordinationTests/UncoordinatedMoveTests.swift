import Foundation
import SystemSupport
import Testing
@testable import FileCoordination

/// Presented items renamed, moved, deleted or replaced by programs that do not coordinate
/// (`/bin/mv`, `/bin/rm`, a child process doing what Syncthing does), each a separate process.
@Suite("Moves and deletions made by programs that do not coordinate", .serialized)
struct UncoordinatedMoveTests {
    @Test("mv within the folder: the presenter follows (presentedItemDidMove), and so does the registry")
    func renameWithinFolder() throws {
        let scratch = try Scratch()
        let old = scratch.file("before.txt", contents: "x")
        let presenter = RecordingPresenter(old)
        try withPresenters([presenter]) {
            try run("/bin/mv", old.path, scratch.url.appendingPathComponent("after.txt").path)
            try waitUntil(presenter, logs: "didMove:after.txt")
            #expect(presenter.presentedItemURL?.path == scratch.url.appendingPathComponent("after.txt").path)
            // The registry has it at its new place: a writer of the new path asks it to relinquish.
            presenter.clear()
            try Coordinator().coordinate(writingItemAt: scratch.url.appendingPathComponent("after.txt")) { _ in }
            #expect(presenter.log.contains("relinquishToWriter"))
            try waitForDeletionChecks()
            #expect(!presenter.log.contains("accommodateDeletion"))
        }
    }

    @Test("mv to a name that is not UTF-8 (bytes 0xFF 0xFE): the presenter gets the exact name")
    func renameToNameNotUTF8() throws {
        let scratch = try Scratch()
        let old = scratch.file("plain.txt", contents: "x")
        let presenter = RecordingPresenter(old)
        let name: [UInt8] = Array("w".utf8) + [0xFF, 0xFE] + Array(".txt".utf8)
        try withPresenters([presenter]) {
            // The shell makes the bytes; mv is still a process of its own.
            try run("/bin/sh", "-c", #"exec /bin/mv -- plain.txt "$(printf 'w\377\376.txt')""#, in: scratch.url)
            try waitUntil(presenter) { $0.contains { $0.hasPrefix("didMove:") } }
            let moved = try #require(presenter.presentedItemURL)
            #expect(PathBytes.bytes(of: PathBytes.path(of: moved)) == PathBytes.bytes(of: PathBytes.path(of: rawNameURL(in: scratch.url, name))))
            // And back to a plain name: the monitor watches the new name.
            try run("/bin/sh", "-c", #"exec /bin/mv -- "$(printf 'w\377\376.txt')" back.txt"#, in: scratch.url)
            try waitUntil(presenter, logs: "didMove:back.txt")
        }
    }

    @Test("mv into another watched folder: the presenter follows")
    func moveIntoAnotherWatchedFolder() throws {
        let scratch = try Scratch()
        let item = scratch.file("one/doc.txt", contents: "x")
        let neighbour = RecordingPresenter(scratch.file("two/other.txt", contents: "y"))
        let presenter = RecordingPresenter(item)
        try withPresenters([presenter, neighbour]) {
            let destination = scratch.url.appendingPathComponent("two/moved.txt")
            try run("/bin/mv", item.path, destination.path)
            try waitUntil(presenter, logs: "didMove:moved.txt")
            #expect(presenter.presentedItemURL?.path == destination.path)
            // Its changes are reported at the new place.
            let changed = Signal()
            presenter.changed.withLock { $0 = changed }
            try "new".write(to: destination, atomically: true, encoding: .utf8)
            #expect(changed.wait())
        }
        #expect(!neighbour.log.contains { $0.hasPrefix("didMove") })
    }

    /// `mv` by another program to where the presenters cannot follow is a deletion, not a move:
    /// out of every watched folder, or to a conflict copy's name (the copy is a version).
    @Test("an mv the presenters cannot follow is a deletion", arguments: [
        ("watched/doc.txt", "elsewhere/doc.txt"),                              // out of every watched folder
        ("doc.txt", "doc.sync-conflict-20250101-120000-ABCDEFG.txt"),          // to a conflict copy's name
    ])
    func moveThatIsADeletion(from name: String, to destinationName: String) throws {
        let scratch = try Scratch()
        let item = scratch.file(name, contents: "x")
        let destination = scratch.url.appendingPathComponent(destinationName)
        try FileManager.default.createDirectory(at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
        let presenter = RecordingPresenter(item)
        try withPresenters([presenter]) {
            try run("/bin/mv", item.path, destination.path)
            try waitUntil(presenter, logs: "accommodateDeletion")
            #expect(!presenter.log.contains { $0.hasPrefix("didMove") }, "\(presenter.log)")
            #expect(presenter.presentedItemURL == item)
        }
    }

    @Test("rm: the presenters get accommodatePresentedItemDeletion, not a change")
    func removal() throws {
        let scratch = try Scratch()
        let item = scratch.file("gone.txt", contents: "x")
        let presenter = RecordingPresenter(item), second = RecordingPresenter(item)
        try withPresenters([presenter, second]) {
            try run("/bin/rm", item.path)
            try waitUntil(presenter, logs: "accommodateDeletion")
            try waitUntil(second, logs: "accommodateDeletion")
            try waitForDeletionChecks()
            #expect(presenter.log == ["accommodateDeletion"])
        }
    }

    @Test("a presented folder moved with mv: it and the presenters inside it follow, and the inner item is still watched")
    func folderMove() throws {
        let scratch = try Scratch()
        let folder = try scratch.directory("box")
        let inner = scratch.file("box/inner.txt", contents: "x")
        let folderPresenter = RecordingPresenter(folder)
        let (innerPresenter, changed) = RecordingPresenter.signallingChanges(inner)
        try withPresenters([folderPresenter, innerPresenter]) {
            let renamed = scratch.url.appendingPathComponent("crate")
            try run("/bin/mv", folder.path, renamed.path)
            try waitUntil(folderPresenter, logs: "didMove:crate")
            try waitUntil(innerPresenter, logs: "didMove:inner.txt")
            #expect(innerPresenter.presentedItemURL?.path == renamed.appendingPathComponent("inner.txt").path)
            try "changed".write(to: renamed.appendingPathComponent("inner.txt"), atomically: true, encoding: .utf8)
            #expect(changed.wait(), "the inner item is watched at its new place")
            try waitForDeletionChecks()
            #expect(!innerPresenter.log.contains("accommodateDeletion"))
        }
    }

    @Test("Syncthing's rename through its temporary name (by a child process): followed to the final name only")
    func renameThroughTemporaryName() throws {
        let scratch = try Scratch()
        let item = scratch.file("small.txt", contents: "x")
        let presenter = RecordingPresenter(item)
        try withPresenters([presenter]) {
            let child = try ChildProcess(["syncthing-rename", item.path, "renamed.txt"])
            #expect(child.expect("RENAMED") == "RENAMED")
            child.waitForExit()
            try waitUntil(presenter, logs: "didMove:renamed.txt")
            try waitForDeletionChecks()
            #expect(presenter.log == ["didMove:renamed.txt"])
            #expect(presenter.presentedItemURL?.path == scratch.url.appendingPathComponent("renamed.txt").path)
        }
    }

    @Test("two names exchanged at once (renameat2, by a child process): the item there was replaced, a change, not a move")
    func exchangeIsAChange() throws {
        let scratch = try Scratch()
        let item = scratch.file("doc.txt", contents: "mine")
        let other = scratch.file(".doc.txt.new", contents: "replacement")
        let (presenter, changed) = RecordingPresenter.signallingChanges(item)
        try withPresenters([presenter]) {
            let child = try ChildProcess(["exchange", other.path, item.path])
            #expect(child.expect("EXCHANGED") == "EXCHANGED")
            child.waitForExit()
            #expect(changed.wait())
            try waitForDeletionChecks()
            #expect(presenter.log == ["didChange"])
            #expect(presenter.presentedItemURL == item)
        }
        #expect(try String(contentsOf: item, encoding: .utf8) == "replacement")
    }

    @Test("Syncthing's delete-then-rename replacement (by a child process) is a change, never a deletion")
    func deleteThenRenameIsAChange() throws {
        let scratch = try Scratch()
        let item = scratch.file("doc.txt", contents: "old")
        let (presenter, changed) = RecordingPresenter.signallingChanges(item)
        try withPresenters([presenter]) {
            for round in 1...3 {
                let child = try ChildProcess(["syncthing-replace", item.path, "version \(round)"])
                #expect(child.expect("REPLACED") == "REPLACED")
                child.waitForExit()
                #expect(changed.wait(), "round \(round): the presenter was told of the change")
            }
            // Every check of the moment without doc.txt is over: nothing more can come.
            try waitForDeletionChecks()
            #expect(!presenter.log.contains("accommodateDeletion"), "\(presenter.log)")
            #expect(!presenter.log.contains { $0.hasPrefix("didMove") }, "\(presenter.log)")
            #expect(presenter.presentedItemURL == item)
        }
        #expect(try String(contentsOf: item, encoding: .utf8) == "version 3")
    }
}

/// Runs `executable` with `arguments` as a process of its own and waits for it to succeed.
private func run(_ executable: String, _ arguments: String..., in folder: URL? = nil) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let folder { process.currentDirectoryURL = folder }
    try process.run()
    process.waitUntilExit()
    #expect(process.terminationStatus == 0, "\(executable) \(arguments)")
}

/// Waits until `presenter`'s log satisfies `condition`.
private func waitUntil(_ presenter: RecordingPresenter, _ condition: ([String]) -> Bool) throws {
    try Polling.blockUntil("the presenter's log", details: { "presenter log: \(presenter.log)" }) { condition(presenter.log) }
}

private func waitUntil(_ presenter: RecordingPresenter, logs event: String) throws {
    try waitUntil(presenter) { $0.contains(event) }
}

/// Waits until the change monitor has decided about every item it found missing (a deletion it
/// found is then on the presenters' queues, which `RecordingPresenter.log` waits for).
private func waitForDeletionChecks() throws {
    try Polling.blockUntil("the change monitor's deletion checks") { !CoordinationRuntime.process.isCheckingDeletions }
}
