import Foundation
import Glibc
import Testing
@testable import Ubiquity

/// Gathering and live updates of `MetadataQuery` over a folder scope, in this process.
@Suite struct MetadataQueryTests {
    /// Returns once the query has applied every change made before the call and queued what it
    /// delivers for them: the first hold is entered in the loop turn that then reads the kernel's
    /// reports at hand, the second only once that turn is over.
    private func settle(_ query: MetadataQuery) {
        for _ in 0..<2 { query.holdForTesting()?.signal() }
    }


    @Test("gathering finds files and folders, not hidden names, sync temporaries or conflict copies; the original has conflicts")
    func gathering() throws {
        let folder = try Scratch("query-gather")
        defer { folder.remove() }
        for name in ["a.txt", "sub/b.txt", "sub/deeper/c.md", ".hidden", ".syncthing.d.txt.tmp", "e.txt.part",
                     "doc.txt", "doc.sync-conflict-20240101-120000-ABCDEFG.txt", ".stfolder/x"] {
            try folder.write("x", at: name)
        }
        let recorder = QueryRecorder()
        let query = try recorder.startQuery([.folder(folder.url)])
        #expect(Set(query.results.map(\.name)) == ["a.txt", "sub", "b.txt", "deeper", "c.md", "doc.txt"])
        #expect(query.results.first { $0.name == "doc.txt" }?.hasUnresolvedConflicts == true)
        #expect(query.results.first { $0.name == "a.txt" }?.hasUnresolvedConflicts == false)
        #expect(recorder.all.first == .didStartGathering)
        #expect(!query.isGathering && query.isStarted)
        let b = try #require(query.results.first { $0.name == "b.txt" })
        #expect(b.path == folder.path + "/sub/b.txt")
        #expect(b.size == 1 && !b.isFolder && b.displayName == "b")
        #expect(b.value(of: .fsSize) as? Int == 1)
        #expect(b.value(of: .downloadingStatus) == nil)      // not in a container
        query.stop()
        #expect(query.isStopped)
    }

    @Test("created, changed, renamed and deleted files and folders are each reported once")
    func liveChanges() throws {
        let folder = try Scratch("query-live")
        defer { folder.remove() }
        try folder.write("old", at: "keep.txt")
        let recorder = QueryRecorder()
        let query = try recorder.startQuery([.folder(folder.url)])

        try folder.write("new", at: "new.txt")
        #expect(recorder.waitForUpdates { $0.added.map(\.name) == ["new.txt"] })
        let added = try #require(recorder.merged.added.first)

        let handle = try FileHandle(forWritingTo: folder.url.appending(path: "keep.txt"))
        try handle.write(contentsOf: Data("longer contents".utf8))
        try handle.close()
        #expect(recorder.waitForUpdates { $0.changed.contains { $0.name == "keep.txt" && $0.size == 15 } })

        #expect(rename(folder.path + "/new.txt", folder.path + "/renamed.txt") == 0)
        #expect(recorder.waitForUpdates { $0.changed.contains { $0.name == "renamed.txt" } })
        #expect(recorder.merged.changed.first { $0.name == "renamed.txt" }?.id == added.id)

        #expect(unlink(folder.path + "/renamed.txt") == 0)
        #expect(recorder.waitForUpdates { $0.removed.contains { $0.id == added.id } })

        // A folder made with files inside, renamed (its items keep their identifiers), removed.
        #expect(mkdir(folder.path + "/box", 0o755) == 0)
        try folder.write("1", at: "box/one.txt")
        try folder.write("2", at: "box/inner/two.txt")
        #expect(recorder.waitForUpdates { Set($0.added.map(\.name)).isSuperset(of: ["box", "one.txt", "inner", "two.txt"]) })
        let two = try #require(recorder.merged.added.first { $0.name == "two.txt" })
        #expect(rename(folder.path + "/box", folder.path + "/crate") == 0)
        #expect(recorder.waitForUpdates { $0.changed.contains { $0.id == two.id && $0.path == folder.path + "/crate/inner/two.txt" } })
        try FileManager.default.removeItem(atPath: folder.path + "/crate")
        #expect(recorder.waitForUpdates { Set($0.removed.map(\.name)).isSuperset(of: ["crate", "one.txt", "inner", "two.txt"]) })
        recorder.drain()

        // Each reported exactly once, and the results are what is on disk.
        let merged = recorder.merged
        #expect(merged.added.count == Set(merged.added.map(\.id)).count)
        #expect(merged.removed.count == Set(merged.removed.map(\.id)).count)
        #expect(merged.added.map(\.name).sorted() == ["box", "inner", "new.txt", "one.txt", "two.txt"])
        #expect(query.results.map(\.name) == ["keep.txt"])
        query.stop()
    }

    @Test("a conflict copy appearing marks its original, not itself; its removal clears the mark")
    func conflictCopiesLive() throws {
        let folder = try Scratch("query-conflicts")
        defer { folder.remove() }
        try folder.write("mine", at: "doc.txt")
        let recorder = QueryRecorder()
        let query = try recorder.startQuery([.folder(folder.url)])
        let copy = "doc.sync-conflict-20240101-120000-ABCDEFG.txt"
        // As Syncthing makes it: a temporary file renamed to the copy's name.
        try folder.write("theirs", at: copy)
        #expect(recorder.waitForUpdates { $0.changed.contains { $0.name == "doc.txt" && $0.hasUnresolvedConflicts } })
        #expect(unlink(folder.path + "/" + copy) == 0)
        #expect(recorder.waitForUpdates { $0.changed.contains { $0.name == "doc.txt" && !$0.hasUnresolvedConflicts } })
        recorder.drain()
        #expect(!recorder.merged.added.contains { $0.name == copy })
        #expect(query.results.map(\.name) == ["doc.txt"])
        query.stop()
    }

    @Test("after the kernel's queue overflows, a rescan reports every difference exactly once")
    func overflowRescan() throws {
        let folder = try Scratch("query-overflow")
        defer { folder.remove() }
        for index in 0..<20 { try folder.write("\(index)", at: "f\(index).txt") }
        try folder.write("x", at: "sub/s.txt")
        let recorder = QueryRecorder()
        let query = try recorder.startQuery([.folder(folder.url)])
        let before = Dictionary(uniqueKeysWithValues: query.results.map { ($0.name, $0.id) })

        let release = try #require(query.holdForTesting())
        for index in 0..<5 { #expect(unlink(folder.path + "/f\(index).txt") == 0) }
        for index in 5..<8 { try Data("changed \(index)".utf8).write(to: folder.url.appending(path: "f\(index).txt")) }
        for index in 20..<26 { try folder.write("\(index)", at: "f\(index).txt") }
        try folder.write("y", at: "newsub/n.txt")
        try FileManager.default.removeItem(atPath: folder.path + "/sub")
        query.simulateOverflowForTesting()
        release.signal()

        #expect(recorder.waitForUpdates { $0.added.count >= 8 && $0.removed.count >= 7 && $0.changed.count >= 3 })
        let entered = try #require(query.holdForTesting())   // everything the rescan delivered is queued
        entered.signal()
        recorder.drain()
        let merged = recorder.merged
        #expect(merged.removed.map(\.name).sorted() == ["f0.txt", "f1.txt", "f2.txt", "f3.txt", "f4.txt", "s.txt", "sub"])
        #expect(merged.changed.map(\.name).sorted() == ["f5.txt", "f6.txt", "f7.txt"])
        #expect(merged.changed.allSatisfy { before[$0.name] == $0.id })
        #expect(merged.added.map(\.name).sorted() == ["f20.txt", "f21.txt", "f22.txt", "f23.txt", "f24.txt", "f25.txt", "n.txt", "newsub"])
        let onDisk = try FileManager.default.subpathsOfDirectory(atPath: folder.path).filter { !$0.contains("/.") && !$0.hasPrefix(".") }
        #expect(query.results.map { String($0.path.dropFirst(folder.path.count + 1)) }.sorted() == onDisk.sorted())

        // Still live after the rescan: the new folder is watched.
        try folder.write("z", at: "newsub/later.txt")
        #expect(recorder.waitForUpdates { $0.added.contains { $0.name == "later.txt" } })
        query.stop()
    }

    @Test("disableUpdates nests: nothing is delivered until the last enableUpdates, then the held changes are")
    func disableUpdatesNests() throws {
        let folder = try Scratch("query-disable")
        defer { folder.remove() }
        let recorder = QueryRecorder()
        let query = try recorder.startQuery([.folder(folder.url)])
        query.disableUpdates()
        query.disableUpdates()
        try folder.write("a", at: "a.txt")
        settle(query)
        try folder.write("b", at: "b.txt")
        settle(query)
        recorder.drain()
        #expect(recorder.updates.isEmpty)
        #expect(query.results.isEmpty)
        query.enableUpdates()
        settle(query)
        recorder.drain()
        #expect(recorder.updates.isEmpty)
        query.enableUpdates()
        #expect(recorder.waitForUpdates { Set($0.added.map(\.name)) == ["a.txt", "b.txt"] })
        #expect(Set(query.results.map(\.name)) == ["a.txt", "b.txt"])
        query.stop()
    }

    @Test("updates held while disabled and released by enableUpdates come before those queued meanwhile: in order, results the latest")
    func heldUpdatesKeepTheirOrder() throws {
        let folder = try Scratch("query-held-order")
        defer { folder.remove() }
        let recorder = QueryRecorder()
        let query = try recorder.startQuery([.folder(folder.url)])
        // Two updates queued while the handler's queue is suspended, with an enableUpdates()
        // between them; updates disabled before the queue resumes: the first is held, released
        // by the enableUpdates() while the second is still queued.
        recorder.queue.isSuspended = true
        try folder.write("a", at: "a.txt")
        settle(query)
        recorder.queue.addOperation { query.enableUpdates() }
        try folder.write("b", at: "b.txt")
        settle(query)
        query.disableUpdates()
        recorder.queue.isSuspended = false
        #expect(recorder.waitForUpdates { Set($0.added.map(\.name)) == ["a.txt", "b.txt"] })
        recorder.drain()
        #expect(recorder.updates.map { $0.added.map(\.name) } == [["a.txt"], ["b.txt"]])
        #expect(Set(query.results.map(\.name)) == ["a.txt", "b.txt"])
        query.stop()
    }

    @Test("two names that differ only in Unicode normalization (é composed and decomposed) are two results, gathered and live")
    func namesDifferingOnlyInNormalization() throws {
        let folder = try Scratch("query-normalization")
        defer { folder.remove() }
        let composed = "caf\u{E9}.txt", decomposed = "cafe\u{301}.txt"
        func create(_ name: String) {
            let descriptor = (folder.path + "/" + name).withCString { open($0, O_CREAT | O_WRONLY | O_CLOEXEC, 0o644) }
            if descriptor >= 0 { close(descriptor) }
        }
        func names(_ items: [MetadataItem]) -> [[UInt8]] { items.map { Array($0.name.utf8) }.sorted { $0.lexicographicallyPrecedes($1) } }
        let both = [Array(composed.utf8), Array(decomposed.utf8)].sorted { $0.lexicographicallyPrecedes($1) }

        // Live: each appears as an addition of its own.
        let recorder = QueryRecorder()
        let query = try recorder.startQuery([.folder(folder.url)])
        create(composed)
        #expect(recorder.waitForUpdates { $0.added.count == 1 })
        create(decomposed)
        // Waited for as an update (the results can hold it a moment before the update reaches the
        // recorder's queue), then the query settled, so a late "changed" would show.
        #expect(recorder.waitForUpdates { update in
            update.added.map { Array($0.name.utf8) }.sorted { $0.lexicographicallyPrecedes($1) } == both
        })
        settle(query)
        recorder.drain()
        #expect(names(recorder.merged.added) == both)
        #expect(recorder.merged.changed.isEmpty)
        #expect(names(query.results) == both)
        // A deletion is reported once its hold ends (the name might come back): waited for.
        _ = (folder.path + "/" + composed).withCString { unlink($0) }
        #expect(recorder.waitForUpdates { !$0.removed.isEmpty })
        settle(query)
        recorder.drain()
        #expect(names(recorder.merged.removed) == [Array(composed.utf8)])
        #expect(names(query.results) == [Array(decomposed.utf8)])
        query.stop()

        // Gathered: both found; removing each reports that one.
        create(composed)
        let gathering = QueryRecorder()
        let second = try gathering.startQuery([.folder(folder.url)])
        #expect(names(second.results) == both)
        for (count, name) in [composed, decomposed].enumerated() {
            _ = (folder.path + "/" + name).withCString { unlink($0) }
            #expect(gathering.waitForUpdates { $0.removed.count == count + 1 })
            settle(second)
            gathering.drain()
            #expect(names(gathering.updates.last?.removed ?? []) == [Array(name.utf8)])
        }
        #expect(second.results.isEmpty)
        second.stop()
    }

    @Test("sort keys order the results and the updates; predicates filter live changes")
    func sortingAndPredicate() throws {
        let folder = try Scratch("query-sort")
        defer { folder.remove() }
        for name in ["b.txt", "d.txt", "a.md"] { try folder.write(name, at: name) }
        let recorder = QueryRecorder()
        let predicate = try MetadataItemPredicate(format: "%K LIKE '*.txt'", MetadataItemAttribute.fsName.rawValue)
        let query = try recorder.startQuery([.folder(folder.url)], predicate: predicate, sortKeys: [MetadataQuerySortKey(.fsName, ascending: false)])
        #expect(query.results.map(\.name) == ["d.txt", "b.txt"])
        try folder.write("c", at: "c.txt")
        try folder.write("e", at: "e.md")
        #expect(recorder.waitForUpdates { $0.added.map(\.name) == ["c.txt"] })
        #expect(query.results.map(\.name) == ["d.txt", "c.txt", "b.txt"])
        #expect(query.result(at: 1)?.name == "c.txt")
        #expect(query.result(at: 3) == nil)
        let c = try #require(query.result(at: 1))
        #expect(query.index(ofResultWithID: c.id) == 1)
        // Renamed out of the predicate: removed.
        #expect(rename(folder.path + "/c.txt", folder.path + "/c.md") == 0)
        #expect(recorder.waitForUpdates { $0.removed.contains { $0.id == c.id } })
        #expect(query.results.map(\.name) == ["d.txt", "b.txt"])
        #expect(throws: MetadataQueryError.alreadyStarted) { try query.start() }
        query.stop()
    }

    @Test("ubiquitous scopes: the documents scope is Documents, the data scope the rest of the container")
    func ubiquitousScopes() throws {
        let folder = try Scratch("query-scopes")
        defer { folder.remove() }
        let account = UbiquityAccount(configuration: UbiquityConfiguration(root: folder.url, containerIdentifiers: ["com.example.notes"]))
        let container = try account.container()
        try folder.write("d", at: "com.example.notes/Documents/doc.txt")
        try folder.write("s", at: "com.example.notes/settings.plist")
        for (scope, expected) in [(MetadataQueryScope.ubiquitousDocuments, ["doc.txt"]), (.ubiquitousData, ["settings.plist"])] {
            let recorder = QueryRecorder()
            let query = try recorder.startQuery([scope], account: account)
            #expect(query.results.map(\.name) == expected)
            #expect(query.results.allSatisfy { $0.isUbiquitous && $0.value(of: .downloadingStatus) as? String == UbiquitousItemStatus.DownloadingStatus.current.rawValue })
            query.stop()
        }
        #expect(container.documentsURL.lastPathComponent == "Documents")
    }

    @Test("a huge or infinite notificationBatchingInterval is accepted without a trap: the changes wait")
    func hugeBatchingInterval() throws {
        let folder = try Scratch("query-huge-batching")
        defer { folder.remove() }
        for interval in [TimeInterval.infinity, 1e12, TimeInterval.greatestFiniteMagnitude] {
            let recorder = QueryRecorder()
            let query = try recorder.startQuery([.folder(folder.url)], batching: interval)
            try folder.write("x", at: "\(recorder.all.count)-\(interval).txt")
            settle(query)
            recorder.drain()
            #expect(recorder.updates.isEmpty, "\(interval)")
            query.stop()
        }
    }

    @Test("notificationBatchingInterval collects changes made together into one update; stop ends the updates")
    func batching() throws {
        let folder = try Scratch("query-batching")
        defer { folder.remove() }
        let recorder = QueryRecorder()
        let query = try recorder.startQuery([.folder(folder.url)], batching: 2)
        for name in ["one.txt", "two.txt", "three.txt"] { try folder.write(name, at: name) }
        #expect(recorder.wait { !$0.isEmpty && $0.last != .didFinishGathering })
        #expect(recorder.updates.count == 1)
        #expect(Set(recorder.merged.added.map(\.name)) == ["one.txt", "two.txt", "three.txt"])
        query.stop()
        #expect(query.holdForTesting() == nil)    // the thread is told to end; nothing more is delivered
        try folder.write("four", at: "four.txt")
        recorder.drain()
        #expect(recorder.updates.count == 1)
        #expect(query.results.count == 3)
    }

    @Test("a stopped query starts again and gathers afresh; a scope folder moved away empties the results")
    func restartAndScopeMovedAway() throws {
        let folder = try Scratch("query-restart")
        defer { folder.remove() }
        try folder.write("a", at: "scope/a.txt")
        let scope = folder.url.appending(path: "scope")
        let recorder = QueryRecorder()
        let query = try recorder.startQuery([.folder(scope)])
        query.stop()
        try folder.write("b", at: "scope/b.txt")
        try query.start()
        #expect(recorder.wait { $0.filter { $0 == .didFinishGathering }.count == 2 })
        #expect(query.results.map(\.name).sorted() == ["a.txt", "b.txt"])
        #expect(rename(scope.path, folder.path + "/elsewhere") == 0)
        #expect(recorder.waitForUpdates { Set($0.removed.map(\.name)) == ["a.txt", "b.txt"] })
        #expect(query.results.isEmpty)
        // The folder that moved away is no longer watched: changes there are not reported.
        try folder.write("c", at: "elsewhere/c.txt")
        settle(query)
        recorder.drain()
        #expect(recorder.merged.added.isEmpty)
        query.stop()
    }
}
