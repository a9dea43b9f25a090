import Foundation
import FoundationCompatibility
import TestSupport
import Testing

// A folder presenter written the way SwiftCloudDrive's `FileMonitor` is: it presents its root
// folder to learn of remote changes a sync tool makes (without coordination) and hears them as
// presentedSubitemDidAppear / presentedSubitemDidChange.

/// Records the root-relative path of every subitem it hears of, and lets a test wait for them.
private final class RootFolderMonitor: NSObject, NSFilePresenter, @unchecked Sendable {
    // @unchecked Sendable: `changes` is only touched with `condition` locked; the rest is immutable.
    let rootDirectory: URL
    var presentedItemURL: URL? { rootDirectory }
    let presentedItemOperationQueue: OperationQueue = {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        return queue
    }()
    private let condition = NSCondition()
    private var changes: [String] = []

    init(rootDirectory: URL) { self.rootDirectory = rootDirectory }

    func presentedSubitemDidAppear(at url: URL) { informOfChange(at: url, "appear") }
    func presentedSubitemDidChange(at url: URL) { informOfChange(at: url, "change") }

    private func informOfChange(at url: URL, _ kind: String) {
        let rootLength = rootDirectory.resolvingSymlinksInPath().standardized.path.count
        let relative = String(url.resolvingSymlinksInPath().standardized.path.dropFirst(rootLength + 1))
        condition.lock()
        changes.append("\(kind) \(relative)")
        condition.broadcast()
        condition.unlock()
    }

    var heard: [String] {
        condition.lock()
        defer { condition.unlock() }
        return changes
    }

    /// Waits on the presenter's own callbacks until `event` was heard (fail-safe: 30 s).
    func waitFor(_ event: String) -> Bool {
        let deadline = Date(timeIntervalSinceNow: 30)
        condition.lock()
        defer { condition.unlock() }
        while !changes.contains(event) {
            if !condition.wait(until: deadline) { return changes.contains(event) }
        }
        return true
    }
}

/// Runs one command of the coordination test helper (a process of its own) and checks its answer.
private func helper(_ arguments: String..., expecting answer: String) throws {
    let child = try ChildProcess(arguments)
    #expect(child.expect(answer) == answer, "\(arguments)")
    child.waitForExit()
}

@Suite("NSFilePresenter of a folder hears a sync tool's changes inside it", .serialized)
struct FolderPresenterTests {
    @Test("created, replaced (temporary, delete, rename) and deleted by another process, also in a subfolder: 3 of 3 heard")
    func syncToolChangesReachTheRootPresenter() throws {
        let scratch = try Scratch()
        let root = scratch.url.appendingPathComponent("Drive", isDirectory: true)
        try FileManager.default.createDirectory(at: root.appendingPathComponent("Notes"), withIntermediateDirectories: true)
        try Data("old".utf8).write(to: root.appendingPathComponent("Notes/todo.txt"))
        let monitor = RootFolderMonitor(rootDirectory: root)
        NSFileCoordinator.addFilePresenter(monitor)
        defer { NSFileCoordinator.removeFilePresenter(monitor) }

        try helper("uncoordinated-create", root.appendingPathComponent("Notes/new.txt").path, "new", expecting: "CREATED")
        #expect(monitor.waitFor("appear Notes/new.txt"), "\(monitor.heard)")
        try helper("syncthing-replace", root.appendingPathComponent("Notes/todo.txt").path, "new version", expecting: "REPLACED")
        #expect(monitor.waitFor("change Notes/todo.txt"), "\(monitor.heard)")
        try helper("uncoordinated-delete", root.appendingPathComponent("Notes/new.txt").path, expecting: "DELETED")
        #expect(monitor.waitFor("change Notes/new.txt"), "\(monitor.heard)")
        #expect(Set(monitor.heard) == ["appear Notes/new.txt", "change Notes/todo.txt", "change Notes/new.txt"])
        // Once each: in one loaded full-suite run the file written just before the presenter was
        // added was also reported changed once, before the creation (not understood yet).
        withKnownIssue("a file written just before the presenter was added may be reported changed once more", isIntermittent: true) {
            #expect(monitor.heard == ["appear Notes/new.txt", "change Notes/todo.txt", "change Notes/new.txt"])
        }
        #expect(FileManager.default.contents(atPath: root.appendingPathComponent("Notes/todo.txt").path) == Data("new version".utf8))
    }

    @Test("a coordinated write through NSFileCoordinator still reaches it once")
    func coordinatedWriteReachesItOnce() throws {
        let scratch = try Scratch()
        let root = scratch.url.appendingPathComponent("Drive", isDirectory: true)
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let probe = root.appendingPathComponent("probe.txt")
        try Data("p".utf8).write(to: probe)
        let monitor = RootFolderMonitor(rootDirectory: root)
        NSFileCoordinator.addFilePresenter(monitor)
        defer { NSFileCoordinator.removeFilePresenter(monitor) }

        var error: NSError?
        NSFileCoordinator(filePresenter: nil).coordinate(writingItemAt: root.appendingPathComponent("doc.txt"), options: [],
                                                         error: &error) { url in
            try? Data("hello".utf8).write(to: url)
        }
        #expect(error == nil)
        #expect(monitor.waitFor("appear doc.txt"), "\(monitor.heard)")
        // Reported after the kernel's reports of the coordinated write: a duplicate would show.
        try helper("uncoordinated-delete", probe.path, expecting: "DELETED")
        #expect(monitor.waitFor("change probe.txt"), "\(monitor.heard)")
        #expect(monitor.heard == ["appear doc.txt", "change probe.txt"])
    }
}
