import Foundation
import Glibc
import Testing
import FileCoordination
@testable import Ubiquity

/// A live query finds an item's conflict copies from the names it keeps per folder, not from a
/// listing of the folder per event (issue 16, item 6: a burst of creates in a large folder froze
/// a query for minutes). The flags must be what a listing gives.
@Suite struct QueryConflictIndexTests {
    private static let listings: [[String]] = [
        ["doc.txt", "doc.sync-conflict-20240101-120000-ABCDEFG.txt", "doc (conflicted copy 2024-01-01 120000).txt", "other.txt"],
        ["a.txt", "a-b.txt", "a-b-laptop-safeBackup-0001.txt"],
        ["a.txt", "a-b-laptop-safeBackup-0001.txt"],
        ["x.txt..path1", "x.txt..path2", "y.txt"],
        ["notes.txt", "notes.txt.conflict1", "notes.txt.conflict2", "notes.conflict1"],
        ["f", "f (conflict_on_2024-01-01)", "f (conflict #2_on_2024-01-02_was_deleted)"],
        ["doc.txt", "doc (Ann's conflicted copy 2024-01-01).txt", "doc (Ann's conflicted copy 2024-01-01 (1)).txt"],
        ["doc.txt", "~syncthing~doc.sync-conflict-20240101-120000-ABCDEFG.txt.tmp", "doc_conflict-20240101-120000.txt"],
        ["caf\u{E9}.txt", "cafe\u{301}.txt", "caf\u{E9}.sync-conflict-20240101-120000-ABCDEFG.txt"],
    ]

    @Test("the group of an original from its possible copies and an existence test equals the group from the whole listing")
    func groupFromCandidatesEqualsListing() {
        for listing in Self.listings {
            // Every name, and every original a name may be a copy of, once by its bytes.
            let candidates = listing.flatMap { SyncConflictNaming.possibleOriginals(ofCopyNamed: $0) } + listing
            let originals = Dictionary(candidates.map { (Array($0.utf8), $0) }, uniquingKeysWith: { first, _ in first }).values
            for original in originals {
                let copies = listing.filter { name in
                    SyncConflictNaming.possibleOriginals(ofCopyNamed: name).contains { Array($0.utf8) == Array(original.utf8) }
                }
                let group = SyncConflictNaming.conflictGroup(of: original, amongCopies: copies) { name in
                    listing.contains { Array($0.utf8) == Array(name.utf8) }
                }
                #expect(group == SyncConflictNaming.conflictGroup(of: original, in: listing), "\(original) in \(listing)")
            }
        }
    }

    @Test("copies appearing before or after their original, and going, set and clear its flag live as a listing would")
    func liveFlagsMatchAListing() throws {
        let folder = try Scratch("query-conflict-index")
        defer { folder.remove() }
        for index in 0..<300 { try folder.write("x", at: "file-\(index).txt") }
        try folder.write("a", at: "a.txt")
        let recorder = QueryRecorder()
        let query = try recorder.startQuery([.folder(folder.url)])
        let copyOfLater = "later.sync-conflict-20240101-120000-ABCDEFG.txt"
        try folder.write("theirs", at: copyOfLater)                     // before its original
        try folder.write("mine", at: "later.txt")
        #expect(recorder.waitForUpdates { $0.added.contains { $0.name == "later.txt" && $0.hasUnresolvedConflicts } })
        // OneDrive's copy made on another machine (a host not known here), as gathering finds it.
        try folder.write("other", at: "a-laptop-safeBackup-0001.txt")
        #expect(recorder.waitForUpdates { $0.changed.contains { $0.name == "a.txt" && $0.hasUnresolvedConflicts } })
        for index in stride(from: 0, to: 300, by: 50) {
            try folder.write("c", at: "file-\(index) (conflicted copy 2024-01-01 120000).txt")
        }
        #expect(unlink(folder.path + "/" + copyOfLater) == 0)
        #expect(unlink(folder.path + "/file-50 (conflicted copy 2024-01-01 120000).txt") == 0)
        #expect(recorder.waitForUpdates { $0.changed.contains { $0.name == "later.txt" && !$0.hasUnresolvedConflicts } })
        query.settle()
        recorder.drain()
        #expect(!recorder.merged.added.contains { $0.name.contains("conflict") || $0.name.contains("safeBackup") })

        // What the live query holds is what gathering the folder now finds.
        let fresh = QueryRecorder()
        let gathered = try fresh.startQuery([.folder(folder.url)])
        func flags(_ items: [MetadataItem]) -> [String: Bool] {
            Dictionary(uniqueKeysWithValues: items.map { ($0.name, $0.hasUnresolvedConflicts) })
        }
        #expect(flags(query.results) == flags(gathered.results))
        #expect(flags(query.results).filter(\.value).keys.sorted() == ["a.txt", "file-0.txt", "file-100.txt", "file-150.txt", "file-200.txt", "file-250.txt"])
        gathered.stop()
        query.stop()
    }

    @Test("after a rescan the names kept for conflict copies are those on disk: a copy made meanwhile marks, its removal clears")
    func rescanRebuildsTheNames() throws {
        let folder = try Scratch("query-conflict-rescan")
        defer { folder.remove() }
        try folder.write("mine", at: "doc.txt")
        let copy = "doc.sync-conflict-20240101-120000-ABCDEFG.txt"
        let recorder = QueryRecorder()
        let query = try recorder.startQuery([.folder(folder.url)])
        let release = try #require(query.holdForTesting())
        try folder.write("theirs", at: copy)
        query.simulateOverflowForTesting()
        release.signal()
        #expect(recorder.waitForUpdates { $0.changed.contains { $0.name == "doc.txt" && $0.hasUnresolvedConflicts } })
        #expect(unlink(folder.path + "/" + copy) == 0)
        #expect(recorder.waitForUpdates { $0.changed.contains { $0.name == "doc.txt" && !$0.hasUnresolvedConflicts } })
        #expect(query.results.map(\.name) == ["doc.txt"])
        query.stop()
    }
}
