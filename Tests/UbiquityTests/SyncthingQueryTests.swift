import Foundation
import Testing
import TestSupport
@testable import Ubiquity

// Real Syncthing (SyncthingPair, Tests/TestSupport): each side's synced folder is a ubiquity root
// holding the container `com.example.notes`; B runs a live query of its documents scope.
// Serialized: each test runs a pair of its own.

@Suite("Real Syncthing: live metadata queries", .serialized, .timeLimit(.minutes(3 * Polling.deadlineScale)),
       .enabled(if: RequiredTool.syncthing.isInstalledOrRequired, Comment(rawValue: RequiredTool.syncthing.missingMessage)))
struct SyncthingQueryTests {
    private static let identifier = "com.example.notes"

    /// B's account, container and a started live query of its documents scope.
    private func startQueryOnB(_ pair: SyncthingPair) throws -> (MetadataQuery, QueryRecorder, URL, URL) {
        let accountA = UbiquityAccount(configuration: UbiquityConfiguration(root: pair.folder(.a), containerIdentifiers: [Self.identifier]))
        let accountB = UbiquityAccount(configuration: UbiquityConfiguration(root: pair.folder(.b), containerIdentifiers: [Self.identifier]))
        let documentsA = try accountA.container().documentsURL
        let documentsB = try accountB.container().documentsURL
        let recorder = QueryRecorder()
        let query = try recorder.startQuery([.ubiquitousDocuments], account: accountB)
        return (query, recorder, documentsA, documentsB)
    }

    @Test("a document created in A's container appears in B's live query, once, without Syncthing's temporary file")
    func documentAppearsOnB() async throws {
        _ = try RequiredTool.syncthing.require()
        try await SyncthingPair.with { pair in
            let (query, recorder, documentsA, _) = try startQueryOnB(pair)
            try Data("from A".utf8).write(to: documentsA.appending(path: "report.txt"))
            try pair.rescan(.a)
            let arrived = try await offCooperativePool { recorder.waitForUpdates { $0.added.contains { $0.name == "report.txt" } } }
            #expect(arrived)
            try await pair.waitUntilInSync()
            let item = try #require(query.results.first { $0.name == "report.txt" })
            #expect(item.isUbiquitous && item.size == 6 && !item.hasUnresolvedConflicts)
            recorder.drain()
            #expect(recorder.merged.added.map(\.name) == ["report.txt"])
            #expect(query.results.map(\.name) == ["report.txt"])
            query.stop()
        }
    }

    @Test("a conflict copy made by Syncthing shows as has-unresolved-conflicts on the original, not as a result")
    func conflictCopyMarksOriginal() async throws {
        _ = try RequiredTool.syncthing.require()
        try await SyncthingPair.with { pair in
            let (query, recorder, documentsA, documentsB) = try startQueryOnB(pair)
            let onA = documentsA.appending(path: "doc.txt"), onB = documentsB.appending(path: "doc.txt")
            try Data("base".utf8).write(to: onA)
            try pair.rescan(.a)
            #expect(try await offCooperativePool { recorder.waitForUpdates { $0.added.contains { $0.name == "doc.txt" } } })
            try await pair.waitUntilInSync()

            try await pair.pauseLink()
            try Data("edit from A".utf8).write(to: onA)
            try await FileClock.waitUntilAfterModification(of: onA)
            try Data("edit from B".utf8).write(to: onB)           // newer: B wins, A's edit becomes the copy
            try pair.rescan(.a)
            try pair.rescan(.b)
            try await pair.resumeLink()
            let marked = try await offCooperativePool {
                recorder.waitForUpdates { $0.changed.contains { $0.name == "doc.txt" && $0.hasUnresolvedConflicts } }
            }
            #expect(marked)
            try await pair.waitUntilInSync()
            recorder.drain()
            #expect(query.results.map(\.name) == ["doc.txt"])
            #expect(query.results.first?.hasUnresolvedConflicts == true)
            #expect(!recorder.merged.added.contains { $0.name.contains("sync-conflict") })
            let copies = try FileManager.default.contentsOfDirectory(atPath: documentsB.path).filter { $0.contains("sync-conflict") }
            #expect(copies.count == 1)
            query.stop()
        }
    }

    @Test("a document updated on A (Syncthing on B: temporary file, delete, rename into place) is one change in B's live query, never a removal")
    func updateIsOneChangeOnB() async throws {
        _ = try RequiredTool.syncthing.require()
        try await SyncthingPair.with { pair in
            let (query, recorder, documentsA, _) = try startQueryOnB(pair)
            let onA = documentsA.appending(path: "report.txt")
            try Data("first".utf8).write(to: onA)
            try pair.rescan(.a)
            #expect(try await offCooperativePool { recorder.waitForUpdates { $0.added.contains { $0.name == "report.txt" } } })
            try await pair.waitUntilInSync()
            let item = try #require(query.results.first { $0.name == "report.txt" })
            for version in ["second version", "the third version"] {
                try Data(version.utf8).write(to: onA)
                try pair.rescan(.a)
                let size = Int64(version.utf8.count)
                #expect(try await offCooperativePool {
                    recorder.waitForUpdates { $0.changed.contains { $0.id == item.id && $0.size == size } }
                })
                try await pair.waitUntilInSync()
            }
            query.settle()
            recorder.drain()
            let merged = recorder.merged
            #expect(merged.removed.isEmpty, "an update delivered by Syncthing is never a removal")
            #expect(merged.added.map(\.name) == ["report.txt"])
            #expect(merged.changed.allSatisfy { $0.id == item.id })
            #expect(query.results.map(\.id) == [item.id])
            query.stop()
        }
    }
}
