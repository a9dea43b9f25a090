import Foundation
import TestSupport
import FoundationCompatibility
import Testing

/// Apple-style code over `NSMetadataQuery`, compiled as it is written for Apple platforms:
/// `NSPredicate(format:)`, `NSSortDescriptor(key:ascending:)`, notifications with the update keys.
@Suite struct NSMetadataQueryTests {
    /// Collects the notifications a query posts (observer blocks run on the query's queue).
    final class Notifications: @unchecked Sendable {
        // @unchecked: `received` is guarded by `condition`.
        private let condition = NSCondition()
        private var received: [Notification] = []
        private var observers: [any NSObjectProtocol] = []

        init(_ query: NSMetadataQuery) {
            for name in [NSNotification.Name.NSMetadataQueryDidStartGathering, .NSMetadataQueryDidFinishGathering,
                         .NSMetadataQueryDidUpdate, .NSMetadataQueryGatheringProgress] {
                observers.append(NotificationCenter.default.addObserver(forName: name, object: query, queue: nil) { [self] note in
                    condition.lock(); received.append(note); condition.broadcast(); condition.unlock()
                })
            }
        }

        func remove() { observers.forEach(NotificationCenter.default.removeObserver) }

        @discardableResult
        func wait(_ what: ([Notification]) -> Bool) -> Bool {
            let deadline = Date().addingTimeInterval(30)
            condition.lock(); defer { condition.unlock() }
            while !what(received) { if !condition.wait(until: deadline) { return what(received) } }
            return true
        }

        func items(_ key: String) -> [NSMetadataItem] {
            condition.lock(); defer { condition.unlock() }
            return Self.items(key, in: received)
        }

        static func items(_ key: String, in received: [Notification]) -> [NSMetadataItem] {
            received.filter { $0.name == .NSMetadataQueryDidUpdate }.flatMap { $0.userInfo?[key] as? [NSMetadataItem] ?? [] }
        }

        var names: [NSNotification.Name] {
            condition.lock(); defer { condition.unlock() }
            return received.map(\.name)
        }
    }

    private func makeQuery(_ folder: Scratch) -> (NSMetadataQuery, OperationQueue) {
        SharedUbiquityFixture.setUp()  // NSMetadataQuery uses the shared account, which reads its environment once
        let query = NSMetadataQuery()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        query.searchScopes = [folder.url]
        query.notificationBatchingInterval = 0
        query.operationQueue = queue
        return (query, queue)
    }

    @Test("the seeds' recipe: a predicate format, a sort descriptor, notifications, results as NSMetadataItems")
    func appleStyleQuery() throws {
        let folder = try Scratch("query-nsquery")
        defer { folder.remove() }
        for name in ["b.txt", "notes.md", "doc.txt", "doc.sync-conflict-20240101-120000-ABCDEFG.txt"] { try folder.write(name, at: name) }
        let (query, _) = makeQuery(folder)
        query.predicate = NSPredicate(format: "%K LIKE %@", NSMetadataItemFSNameKey, "*.txt")
        query.sortDescriptors = [NSSortDescriptor(key: NSMetadataItemFSNameKey, ascending: true)]
        let notifications = Notifications(query)
        defer { notifications.remove() }
        #expect(query.start())
        #expect(notifications.wait { $0.contains { $0.name == .NSMetadataQueryDidFinishGathering } })
        #expect(notifications.names.first == .NSMetadataQueryDidStartGathering)
        let results = query.results.compactMap { $0 as? NSMetadataItem }
        #expect(results.map { $0.value(forAttribute: NSMetadataItemFSNameKey) as? String } == ["b.txt", "doc.txt"])
        #expect(query.resultCount == 2)
        #expect(query.value(ofAttribute: NSMetadataUbiquitousItemHasUnresolvedConflictsKey, forResultAt: 1) == nil)  // not ubiquitous
        #expect(query.value(ofAttribute: NSMetadataItemPathKey, forResultAt: 1) as? String == folder.path + "/doc.txt")
        #expect(query.value(ofAttribute: NSMetadataItemURLKey, forResultAt: 0) as? URL == folder.url.appending(path: "b.txt"))
        #expect(query.result(at: 5) is NSNull)

        try folder.write("a", at: "a.txt")
        try folder.write("x", at: "ignored.md")
        #expect(notifications.wait { Notifications.items(NSMetadataQueryUpdateAddedItemsKey, in: $0).count == 1 })
        #expect(notifications.items(NSMetadataQueryUpdateAddedItemsKey).first?.value(forAttribute: NSMetadataItemFSNameKey) as? String == "a.txt")
        #expect(query.results.compactMap { ($0 as? NSMetadataItem)?.value(forAttribute: NSMetadataItemDisplayNameKey) as? String } == ["a", "b", "doc"])

        // The same object follows its result through a change.
        let b = try #require(query.result(at: 1) as? NSMetadataItem)
        try Data("longer".utf8).write(to: folder.url.appending(path: "b.txt"))
        #expect(notifications.wait { Notifications.items(NSMetadataQueryUpdateChangedItemsKey, in: $0).contains { $0 === b } })
        #expect(b.value(forAttribute: NSMetadataItemFSSizeKey) as? Int == 6)
        #expect(query.index(ofResult: b) == 1)
        #expect(b.attributes.contains(NSMetadataItemFSContentChangeDateKey))

        #expect(unlink(folder.path + "/b.txt") == 0)
        #expect(notifications.wait { Notifications.items(NSMetadataQueryUpdateRemovedItemsKey, in: $0).contains { $0 === b } })
        #expect(query.index(ofResult: b) == NSNotFound)
        query.stop()
        #expect(query.isStopped && !query.isStarted)
    }

    @Test("an unusable format does not trap: the predicate says why, and start() refuses it")
    func badFormat() throws {
        let folder = try Scratch("query-nsquery-bad")
        defer { folder.remove() }
        let predicate = NSPredicate(format: "%K LIKE", NSMetadataItemFSNameKey)
        let error = try #require(predicate.metadataFormatError)
        #expect(error.localizedDescription.contains("expected a text value"))
        #expect(NSPredicate(format: "%K LIKE '*.txt'", NSMetadataItemFSNameKey).metadataFormatError == nil)
        let (query, _) = makeQuery(folder)
        query.predicate = predicate
        #expect(!query.start())
        #expect(query.startError != nil)
        query.predicate = nil
        query.sortDescriptors = [NSSortDescriptor(keyPath: \NSMetadataItem.description, ascending: true)]
        #expect(!query.start())
        query.sortDescriptors = []
        query.searchScopes = ["NoSuchScope"]
        #expect(!query.start())
        // A URL that is not a file URL is refused, not searched as its path ("/": the whole disk).
        for scope in [URL(string: "https://example.com/")!, URL(string: "https://example.com/tmp")!] {
            query.searchScopes = [scope]
            let started = query.start()
            query.stop()
            #expect(!started, "\(scope)")
        }
    }

    @Test("a block predicate gets NSMetadataItems; NSMetadataItem(url:) reads one file")
    func blockPredicateAndItemFromURL() throws {
        let folder = try Scratch("query-nsquery-block")
        defer { folder.remove() }
        try folder.write("12345", at: "five.txt")
        try folder.write("1", at: "one.txt")
        let (query, _) = makeQuery(folder)
        query.predicate = NSPredicate { object, _ in
            ((object as? NSMetadataItem)?.value(forAttribute: NSMetadataItemFSSizeKey) as? Int ?? 0) > 3
        }
        let notifications = Notifications(query)
        defer { notifications.remove() }
        #expect(query.start())
        #expect(notifications.wait { $0.contains { $0.name == .NSMetadataQueryDidFinishGathering } })
        #expect(query.results.compactMap { ($0 as? NSMetadataItem)?.value(forAttribute: NSMetadataItemFSNameKey) as? String } == ["five.txt"])
        query.stop()
        let item = try #require(NSMetadataItem(url: folder.url.appending(path: "one.txt")))
        #expect(item.value(forAttribute: NSMetadataItemFSSizeKey) as? Int == 1)
        #expect(NSMetadataItem(url: folder.url.appending(path: "missing")) == nil)
    }
}
