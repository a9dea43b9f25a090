import FileCoordination
import Foundation
import Testing
import TestSupport

/// A resolver standing in for the sync agent: it "downloads" an item of its folder when asked, by
/// writing `contents` there, or refuses, or never answers.
private final class FakeDownloads: EvictedItemResolver {
    enum Behaviour: Sendable { case download(String), refuse(String), neverAnswer }
    let folder: String
    let behaviour: Behaviour
    let asked = Locked<[String]>([])

    init(folder: URL, behaviour: Behaviour) {
        self.folder = folder.path
        self.behaviour = behaviour
    }

    func covers(_ path: String) -> Bool { path.hasPrefix(folder + "/") }

    func needsDownload(_ url: URL) -> Bool {
        url.lastPathComponent.hasPrefix("evicted") && !FileManager.default.fileExists(atPath: url.path)
    }

    func bringBack(_ url: URL, wait: EvictedItemWait) throws(CoordinationError) {
        asked.withLock { $0.append(url.lastPathComponent) }
        guard url.lastPathComponent.hasPrefix("evicted") else { return }
        switch behaviour {
        case .download(let contents): try? Data(contents.utf8).write(to: url)
        case .refuse(let reason): throw .itemNotDownloaded(url, reason: reason)
        case .neverAnswer:
            while true {
                try wait.check()
                wait.pause(upTo: .milliseconds(5))
            }
        }
    }
}

@Suite("Files on demand: a coordinated access brings an evicted item back first")
struct EvictedItemResolutionTests {
    @Test("a read of a missing item in a resolver's folder waits for it and reads it; writes for deleting or replacing do not ask")
    func readWaitsForTheDownload() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        do {
            let folder = try scratch.directory("on-demand")
            let resolver = FakeDownloads(folder: folder, behaviour: .download("downloaded"))
            EvictedItemResolution.register(resolver)
            let item = folder.appending(path: "evicted.txt")
            let read = try Coordinator().coordinate(readingItemAt: item) { try String(contentsOf: $0, encoding: .utf8) }
            #expect(read == "downloaded")
            // Present now: not asked again.
            _ = try Coordinator().coordinate(readingItemAt: item) { _ in }
            #expect(resolver.asked.withLock { $0 } == ["evicted.txt"])
            // A replace or a delete needs no bytes.
            let other = folder.appending(path: "evicted-too.txt")
            try Coordinator().coordinate(writingItemAt: other, options: .forReplacing) { try Data("new".utf8).write(to: $0) }
            try Coordinator().coordinate(writingItemAt: other, options: .forDeleting) { try FileManager.default.removeItem(at: $0) }
            #expect(resolver.asked.withLock { $0 } == ["evicted.txt"])
            // Outside the folder: never asked.
            _ = try? Coordinator().coordinate(readingItemAt: scratch.url.appending(path: "evicted-elsewhere")) { _ in }
            #expect(resolver.asked.withLock { $0 } == ["evicted.txt"])
            // Metadata-only accesses need no bytes.
            let metadata = folder.appending(path: "evicted-metadata.txt")
            _ = try? Coordinator().coordinate(readingItemAt: metadata, options: .immediatelyAvailableMetadataOnly) { _ in }
            _ = try? Coordinator().coordinate(writingItemAt: metadata, options: .contentIndependentMetadataOnly) { _ in }
            #expect(resolver.asked.withLock { $0 } == ["evicted.txt"])
            // A folder being moved is asked about (what is evicted inside it comes back first).
            let moved = try scratch.directory("on-demand/evicted-folder")
            try Coordinator().coordinate(writingItemAt: moved, options: .forMoving,
                                         writingItemAt: folder.appending(path: "moved-folder"), options: .forReplacing) { _, _ in }
            #expect(resolver.asked.withLock { $0 } == ["evicted.txt", "evicted-folder"])
        }
    }

    @Test("inside another coordinated access, a new file is created as usual; an evicted one fails at once instead of waiting")
    func nestedAccess() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let folder = try scratch.directory("nested")
        EvictedItemResolution.register(FakeDownloads(folder: folder, behaviour: .neverAnswer))
        let outer = Coordinator()
        try outer.coordinate(readingItemAt: folder) { _ in
            try Coordinator().coordinate(writingItemAt: folder.appending(path: "brand-new.txt")) { try Data("new".utf8).write(to: $0) }
            #expect(throws: CoordinationError.self) {
                try Coordinator().coordinate(readingItemAt: folder.appending(path: "evicted.txt")) { _ in }
            }
        }
        #expect(FileManager.default.fileExists(atPath: folder.appending(path: "brand-new.txt").path))
    }

    @Test("a refused download fails the access with the reason; the accessor does not run")
    func refusedDownload() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        do {
            let folder = try scratch.directory("refusing")
            EvictedItemResolution.register(FakeDownloads(folder: folder, behaviour: .refuse("offline: the server cannot be reached")))
            let item = folder.appending(path: "evicted.txt")
            var ran = false
            #expect(throws: CoordinationError.itemNotDownloaded(item, reason: "offline: the server cannot be reached")) {
                try Coordinator().coordinate(readingItemAt: item) { _ in ran = true }
            }
            #expect(!ran)
            let error = CoordinationError.itemNotDownloaded(item, reason: "offline: the server cannot be reached")
            #expect(error.description.contains("only in the cloud"))
        }
    }

    @Test("waiting for a download honours the coordinator's timeout and cancellation")
    func waitEndsOnTimeoutAndCancel() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let folder = try scratch.directory("silent")
        EvictedItemResolution.register(FakeDownloads(folder: folder, behaviour: .neverAnswer))
        let item = folder.appending(path: "evicted.txt")
        let timed = Coordinator()
        timed.timeout = .milliseconds(50)
        #expect(throws: CoordinationError.timedOut) {
            try timed.coordinate(readingItemAt: item) { _ in }
        }
        let cancelled = Coordinator()
        let task = Task { try await cancelled.coordinate(with: [.readingIntent(with: item)]) { _ in } }
        task.cancel()
        await #expect(throws: CoordinationError.cancelled) { try await task.value }
    }
}
