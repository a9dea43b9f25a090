import Foundation
import TestSupport
import Testing
@testable import FileCoordination

/// A presenter of a folder that records the subitem messages it gets, with paths relative to the
/// folder ("appear sub/a.txt", "change a.txt", "accommodate a.txt", "move a -> b") and
/// "itemChange" for `presentedItemDidChange()`, and lets a test wait for them.
final class FolderRecorder: FilePresenter, @unchecked Sendable {
    // @unchecked Sendable: `recorded` is only touched with `condition` locked; the rest is immutable.
    let presentedItemURL: URL?
    let presentedItemOperationQueue: OperationQueue
    private let root: String
    private let condition = NSCondition()
    private var recorded: [String] = []

    init(_ folder: URL) {
        presentedItemURL = folder
        root = folder.resolvingSymlinksInPath().path
        presentedItemOperationQueue = OperationQueue()
        presentedItemOperationQueue.maxConcurrentOperationCount = 1
    }

    private func relative(_ url: URL) -> String {
        let path = url.path
        return path.hasPrefix(root + "/") ? String(path.dropFirst(root.count + 1)) : path
    }

    private func record(_ event: String) {
        condition.lock()
        recorded.append(event)
        condition.broadcast()
        condition.unlock()
    }

    /// Everything recorded so far, in arrival order.
    var events: [String] {
        condition.lock()
        defer { condition.unlock() }
        return recorded
    }

    func count(_ event: String) -> Int { events.filter { $0 == event }.count }

    /// Waits (on the presenter's own callbacks) until `predicate` holds for the events; false
    /// after a generous fail-safe of 30 s without it.
    func waitUntil(_ predicate: ([String]) -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: 30)
        condition.lock()
        defer { condition.unlock() }
        while !predicate(recorded) {
            if !condition.wait(until: deadline) { return predicate(recorded) }
        }
        return true
    }

    func presentedItemDidChange() { record("itemChange") }
    func presentedSubitemDidAppear(at url: URL) { record("appear " + relative(url)) }
    func presentedSubitemDidChange(at url: URL) { record("change " + relative(url)) }
    func presentedSubitem(at oldURL: URL, didMoveTo newURL: URL) { record("move \(relative(oldURL)) -> \(relative(newURL))") }
    func accommodatePresentedSubitemDeletion(at url: URL, completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        record("accommodate " + relative(url))
        completionHandler(nil)
    }
}

/// Runs one command of the test helper (a process of its own, which does not coordinate for the
/// `uncoordinated-…` and `syncthing-…` commands) and checks its answer.
func runHelper(_ arguments: String..., expecting answer: String) {
    guard let child = try? ChildProcess(arguments) else {
        Issue.record("the helper did not start")
        return
    }
    #expect(child.expect(answer) == answer, "\(arguments)")
    child.waitForExit()
}

/// Presented folders hear what other processes do inside them without coordination (a sync tool
/// delivering files), anywhere below them, once — and coordinated changes still once.
@Suite("Folder presenters and changes made inside the folder", .serialized)
struct FolderPresenterChangeTests {
    @Test("another process creates, replaces (temporary, delete, rename) and deletes files, also in a nested folder it makes: each once")
    func uncoordinatedChangesOfAnotherProcess() throws {
        let scratch = try Scratch()
        let folder = try scratch.directory("root")
        _ = scratch.file("root/replace.txt", contents: "v1")
        _ = scratch.file("root/gone.txt", contents: "bye")
        let recorder = FolderRecorder(folder)
        let path = { (name: String) in folder.appendingPathComponent(name).path }
        withPresenters([recorder]) {
            runHelper("uncoordinated-create", path("new.txt"), "hello", expecting: "CREATED")
            #expect(recorder.waitUntil { $0.contains("appear new.txt") }, "\(recorder.events)")
            runHelper("syncthing-replace", path("replace.txt"), "v2", expecting: "REPLACED")
            #expect(recorder.waitUntil { $0.contains("change replace.txt") }, "\(recorder.events)")
            runHelper("uncoordinated-delete", path("gone.txt"), expecting: "DELETED")
            #expect(recorder.waitUntil { $0.contains("change gone.txt") }, "\(recorder.events)")

            runHelper("uncoordinated-create", path("sub/deeper/note.txt"), "x", expecting: "CREATED")
            #expect(recorder.waitUntil { $0.contains("appear sub/deeper/note.txt") }, "\(recorder.events)")
            runHelper("syncthing-replace", path("sub/deeper/note.txt"), "y", expecting: "REPLACED")
            #expect(recorder.waitUntil { $0.contains("change sub/deeper/note.txt") }, "\(recorder.events)")
            runHelper("uncoordinated-delete", path("sub/deeper/note.txt"), expecting: "DELETED")
            // The deletion's report comes after every earlier report and check (kernel order,
            // then the checks' queue): anything reported twice would be there by now.
            #expect(recorder.waitUntil { $0.filter { $0 == "change sub/deeper/note.txt" }.count == 2 }, "\(recorder.events)")
        }
        let expected = ["appear new.txt", "change replace.txt", "change gone.txt", "appear sub", "appear sub/deeper",
                        "appear sub/deeper/note.txt", "change sub/deeper/note.txt", "change sub/deeper/note.txt"]
        #expect(Set(recorder.events) == Set(expected))
        // Once each: in one loaded full-suite run a file written just before the presenter was
        // added was also reported changed once more (FolderPresenterTests; not understood yet).
        withKnownIssue("a file written just before the presenter was added may be reported changed once more", isIntermittent: true) {
            #expect(recorder.events.sorted() == expected.sorted())
        }
        let folderFirst = recorder.events.firstIndex(of: "appear sub").flatMap { folder in
            recorder.events.firstIndex(of: "appear sub/deeper/note.txt").map { folder < $0 }
        }
        #expect(folderFirst == true, "the folder is announced before what it holds")
    }

    @Test("a folder deleted with everything in it is reported as the folder's deletion")
    func folderDeletedWithContents() throws {
        let scratch = try Scratch()
        let folder = try scratch.directory("root")
        _ = scratch.file("root/album/a.jpg", contents: "a")
        _ = scratch.file("root/album/b.jpg", contents: "b")
        let recorder = FolderRecorder(folder)
        withPresenters([recorder]) {
            runHelper("uncoordinated-delete", folder.appendingPathComponent("album").path, expecting: "DELETED")
            #expect(recorder.waitUntil { $0.contains("change album") }, "\(recorder.events)")
            // Nothing new is reported from the folder's watch once it is gone; a later change
            // beside it still is.
            runHelper("uncoordinated-create", folder.appendingPathComponent("after.txt").path, "z", expecting: "CREATED")
            #expect(recorder.waitUntil { $0.contains("appear after.txt") }, "\(recorder.events)")
        }
        #expect(!recorder.events.contains { $0.hasPrefix("appear") && $0 != "appear after.txt" }, "\(recorder.events)")
        #expect(recorder.count("change album") == 1)
    }

    @Test("coordinated writes and a coordinated delete in this process reach the folder's presenter once")
    func coordinatedChangesHereOnce() throws {
        let scratch = try Scratch()
        let folder = try scratch.directory("root")
        let probe = scratch.file("root/probe.txt", contents: "p")
        let file = folder.appendingPathComponent("a.txt")
        let recorder = FolderRecorder(folder)
        try withPresenters([recorder]) {
            try Coordinator().coordinate(writingItemAt: file) { url in try "1".write(to: url, atomically: false, encoding: .utf8) }
            #expect(recorder.waitUntil { $0.contains("appear a.txt") }, "\(recorder.events)")
            try Coordinator().coordinate(writingItemAt: file) { url in try "2".write(to: url, atomically: true, encoding: .utf8) }
            #expect(recorder.waitUntil { $0.contains("change a.txt") }, "\(recorder.events)")
            try Coordinator().coordinate(writingItemAt: file, options: .forDeleting) { url in try FileManager.default.removeItem(at: url) }
            #expect(recorder.waitUntil { $0.contains("accommodate a.txt") }, "\(recorder.events)")
            // A change made afterwards without coordination is reported after the kernel's reports
            // of the coordinated ones (and after their deletion checks): a duplicate would show.
            runHelper("uncoordinated-delete", probe.path, expecting: "DELETED")
            #expect(recorder.waitUntil { $0.contains("change probe.txt") }, "\(recorder.events)")
        }
        #expect(recorder.events == ["appear a.txt", "change a.txt", "accommodate a.txt", "change probe.txt"])
    }

    @Test("a coordinated write by another process reaches the folder's presenter once (message or monitor, not both)")
    func coordinatedChangeElsewhereOnce() throws {
        let scratch = try Scratch()
        let folder = try scratch.directory("root")
        let counter = scratch.file("root/counter.txt", contents: "41")
        let probe = scratch.file("root/probe.txt", contents: "p")
        let recorder = FolderRecorder(folder)
        withPresenters([recorder]) {
            runHelper("increment", counter.path, "1", expecting: "DONE")
            #expect(recorder.waitUntil { $0.contains("change counter.txt") }, "\(recorder.events)")
            runHelper("uncoordinated-delete", probe.path, expecting: "DELETED")
            #expect(recorder.waitUntil { $0.contains("change probe.txt") }, "\(recorder.events)")
        }
        #expect(recorder.count("change counter.txt") == 1, "\(recorder.events)")
        #expect(try String(contentsOf: counter, encoding: .utf8) == "42")
    }

    @Test("a burst of files made by another process: each announced once")
    func burstOfFiles() throws {
        let scratch = try Scratch()
        let folder = try scratch.directory("root")
        let count = 1000
        let recorder = FolderRecorder(folder)
        withPresenters([recorder]) {
            runHelper("uncoordinated-burst", folder.path, String(count), expecting: "MADE \(count)")
            #expect(recorder.waitUntil { $0.count >= count }, "\(recorder.events.count) of \(count)")
            runHelper("uncoordinated-create", folder.appendingPathComponent("probe.txt").path, "p", expecting: "CREATED")
            #expect(recorder.waitUntil { $0.contains("appear probe.txt") })
        }
        let events = recorder.events
        #expect(Set(events) == Set((0..<count).map { "appear f\($0)" } + ["appear probe.txt"]))
        #expect(events.count == count + 1, "each file once")
    }

    @Test("a presented folder made after its presenter registered is watched inside once it exists")
    func folderMadeLater() throws {
        let scratch = try Scratch()
        let folder = scratch.url.appendingPathComponent("later", isDirectory: true)
        let recorder = FolderRecorder(folder)
        withPresenters([recorder]) {
            runHelper("uncoordinated-create", folder.appendingPathComponent("first.txt").path, "1", expecting: "CREATED")
            #expect(recorder.waitUntil { $0.contains("itemChange") }, "\(recorder.events)")  // the folder appeared
            runHelper("uncoordinated-create", folder.appendingPathComponent("second.txt").path, "2", expecting: "CREATED")
            #expect(recorder.waitUntil { $0.contains("appear second.txt") }, "\(recorder.events)")
        }
    }

    @Test("beyond the folder limit: the shallow folders are watched, the presenter is told once, every watch is given back")
    func beyondTheFolderLimit() throws {
        let scratch = try Scratch()
        let folder = try scratch.directory("big")
        for index in 0..<(ChangeMonitor.subtreeFolderLimit + 2) {
            try FileManager.default.createDirectory(at: folder.appendingPathComponent("d\(index)"), withIntermediateDirectories: false)
        }
        // A runtime of its own: the limit is per runtime, and other tests must keep theirs.
        let runtime = CoordinationRuntime(lockDirectoryPath: scratch.url.path + "/locks")
        let recorder = FolderRecorder(folder)
        runtime.addFilePresenter(recorder)
        #expect(recorder.waitUntil { $0.contains("itemChange") }, "told once that not everything is watched")
        let (watched, truncated) = runtime.changeMonitor.state.withLock { ($0.treeFolders.count, $0.truncatedRoots) }
        #expect(watched == ChangeMonitor.subtreeFolderLimit)
        #expect(truncated.count == 1)
        // The folder itself is watched (breadth first): what happens in it is still reported.
        runHelper("uncoordinated-create", folder.appendingPathComponent("top.txt").path, "t", expecting: "CREATED")
        #expect(recorder.waitUntil { $0.contains("appear top.txt") }, "\(recorder.events)")
        runtime.removeFilePresenter(recorder)
        let left = runtime.changeMonitor.state.withLock { ($0.treeFolders.count, $0.treeFolderByDescriptor.count, $0.descriptorUsers.count) }
        #expect(left == (0, 0, 0))
        #expect(recorder.count("itemChange") == 1)
    }
}
