import Foundation
import Testing
@testable import CloudDocuments

struct InternalItemCase: Sendable, CustomTestStringConvertible {
    let name: String
    let owner: SyncInternalItemOwner
    let kind: SyncInternalItemKind
    var testDescription: String { name }
}

let internalItemCases: [InternalItemCase] = [
    .init(name: ".syncthing.doc.txt.tmp", owner: .syncthing, kind: .transferTemporary),
    .init(name: ".syncthing.n.txt.tmp", owner: .syncthing, kind: .transferTemporary),
    .init(name: "~syncthing~doc.txt.tmp", owner: .syncthing, kind: .transferTemporary),
    .init(name: ".syncthing." + String(repeating: "ab", count: 32) + ".tmp", owner: .syncthing, kind: .transferTemporary),
    .init(name: ".syncthing.doc.sync-conflict-20261123-051644-SUBNBV7.txt.tmp", owner: .syncthing,
          kind: .transferTemporary),
    .init(name: ".stfolder", owner: .syncthing, kind: .toolMetadata),
    .init(name: ".stignore", owner: .syncthing, kind: .toolMetadata),
    .init(name: ".stversions", owner: .syncthing, kind: .toolMetadata),
    .init(name: ".doc.txt.~1a2b3c4d", owner: .nextcloud, kind: .transferTemporary),
    .init(name: ".doc.txt.~f", owner: .nextcloud, kind: .transferTemporary),
    .init(name: ".noext.~ffffffff", owner: .nextcloud, kind: .transferTemporary),
    .init(name: ".sync_5d4f8e1b2a3c.db", owner: .nextcloud, kind: .toolMetadata),
    .init(name: ".sync_5d4f8e1b2a3c.db-wal", owner: .nextcloud, kind: .toolMetadata),
    .init(name: ".sync_5d4f8e1b2a3c.db-shm", owner: .nextcloud, kind: .toolMetadata),
    .init(name: "._sync_5d4f8e1b2a3c.db", owner: .nextcloud, kind: .toolMetadata),
    .init(name: ".csync_journal.db", owner: .nextcloud, kind: .toolMetadata),
    .init(name: ".csync_journal.db-journal", owner: .nextcloud, kind: .toolMetadata),
    .init(name: ".owncloudsync.log", owner: .nextcloud, kind: .toolMetadata),
    .init(name: "big.iso.part", owner: .nextcloud, kind: .transferTemporary),
    .init(name: "video.mp4.filepart", owner: .nextcloud, kind: .transferTemporary),
    .init(name: ".dropbox", owner: .dropbox, kind: .toolMetadata),
    .init(name: ".dropbox.cache", owner: .dropbox, kind: .toolMetadata),
    .init(name: "doc.txt.partial", owner: .rcloneOrOneDrive, kind: .transferTemporary),
    .init(name: "doc.txt.a1b2c3d4.partial", owner: .rcloneOrOneDrive, kind: .transferTemporary),
    .init(name: "photo.jpg.!sync", owner: .resilio, kind: .transferTemporary),
    .init(name: ".sync", owner: .resilio, kind: .toolMetadata),
    .init(name: ".unison.doc.txt.581106b2917358e73c9036f678424717.unison.tmp", owner: .unison, kind: .transferTemporary),
    .init(name: ".#Important Documents.647aec350ea81d25a4672b4b2f5e6883.unison.tmp", owner: .unison,
          kind: .transferTemporary),
    .init(name: ".~lock.report.odt#", owner: .office, kind: .lockOrSwap),
    .init(name: "~$report.docx", owner: .office, kind: .lockOrSwap),
    .init(name: ".report.txt.swp", owner: .editor, kind: .lockOrSwap),
    .init(name: ".#report.txt", owner: .editor, kind: .lockOrSwap),
    .init(name: "report.txt~", owner: .editor, kind: .editorBackup),
    // Not a Nextcloud download (no hex digits), but it does end with `~`.
    .init(name: ".doc.txt.~", owner: .editor, kind: .editorBackup),
    .init(name: ".dat.nosync1a2b.Xy3z9Q", owner: .foundation, kind: .transferTemporary),
]

let notInternalItems: [String] = [
    "doc.txt", ".hidden", "stfolder", ".stfolder2", ".syncthing.tmp", "syncthing.doc.txt.tmp",
    ".syncthing.doc.txt", ".doc.txt.~xyz", ".doc.txt.~123456789", ".doc.txt.~1A2B",
    "doc.txt.~1a2b", ".~1a2b", ".part", "part", "report.partial.txt", "~", ".sync_notes.txt", ".sync.db",
    ".dat", "report.tmp", "#draft#", ".unison.tmp", "unison.tmp", ".~lock.report.odt", "~report.docx",
    ".swp", "report.swp", ".dropboxrc", "sync", "doc.sync-conflict-20261123-051644-SUBNBV7.txt",
]

@Suite("Temporary and internal files of sync tools")
struct SyncInternalItemsTests {
    @Test("recognised", arguments: internalItemCases)
    func recognised(_ expected: InternalItemCase) {
        let item = SyncInternalItems.item(named: expected.name)
        #expect(item == SyncInternalItem(owner: expected.owner, kind: expected.kind))
        #expect(SyncConflictNaming.isHiddenFromPresenters(expected.name))
        #expect(SyncConflictNaming.conflictCopy(named: expected.name) == nil, "never a conflict copy")
    }

    @Test("ordinary names are not internal items", arguments: notInternalItems)
    func ordinary(_ name: String) {
        #expect(SyncInternalItems.item(named: name) == nil)
    }
}
