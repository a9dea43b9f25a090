import Foundation
import Testing
@testable import CloudDocuments

@Suite("Conflict copies grouped by original")
struct SyncConflictGroupsTests {
    let listing = [
        "doc.txt", "doc.sync-conflict-20261123-051644-SUBNBV7.txt", "doc (conflicted copy 2026-11-23 051644).txt",
        ".syncthing.doc.txt.tmp", ".syncthing.doc.sync-conflict-20261123-051644-SUBNBV7.txt.tmp",
        "notes.md..path2", "notes.md..path1", "plain.txt", "budget-laptop.txt", "report.odt", "report-laptop.odt",
        "x.txt", "x-otherhost-safeBackup-0001.txt", "my-file.txt", "my-file-some-host-safeBackup-0001.txt",
        "lonely-nohost-safeBackup-0001.txt", "gone.sync-conflict-20261123-051644-SUBNBV7.txt",
    ]

    @Test("groups by original name, with internal items left out")
    func groups() throws {
        let groups = SyncConflictNaming.conflictGroups(in: listing,
                                                       options: .init(oneDriveHostNames: ["laptop"]))
        #expect(Set(groups.keys) == ["doc.txt", "notes.md", "report.odt", "x.txt", "my-file.txt", "gone.txt"])

        let doc = try #require(groups["doc.txt"])
        #expect(doc.originalIsPresent)
        #expect(doc.copies.map(\.name) == ["doc (conflicted copy 2026-11-23 051644).txt",
                                           "doc.sync-conflict-20261123-051644-SUBNBV7.txt"])
        #expect(doc.copies.map(\.tool) == [.nextcloud, .syncthing])

        let notes = try #require(groups["notes.md"])
        #expect(!notes.originalIsPresent, "rclone bisync renamed both sides")
        #expect(notes.copies.map(\.name) == ["notes.md..path1", "notes.md..path2"])

        #expect(groups["report.odt"]?.copies.map(\.scheme) == [.oneDriveLegacy])
        #expect(groups["budget.txt"] == nil, "budget-laptop.txt is an ordinary name: budget.txt is absent")

        let x = try #require(groups["x.txt"]?.copies.first)
        #expect(x.scheme == .oneDriveSafeBackup && x.savingComputer == "otherhost")
        let myFile = try #require(groups["my-file.txt"]?.copies.first)
        #expect(myFile.savingComputer == "some-host", "split where the original exists")
        #expect(groups["gone.txt"]?.originalIsPresent == false)
    }

    @Test("without host names, the legacy OneDrive scheme is never recognised")
    func noHosts() {
        let groups = SyncConflictNaming.conflictGroups(in: listing)
        #expect(groups["report.odt"] == nil)
        #expect(groups["x.txt"] != nil)
    }

    @Test("an empty listing has no groups")
    func empty() {
        #expect(SyncConflictNaming.conflictGroups(in: [String]()).isEmpty)
    }

    func group(_ names: [String]) throws -> SyncConflictGroup {
        let groups = SyncConflictNaming.conflictGroups(in: names)
        #expect(groups.count == 1)
        return try #require(groups.values.first)
    }

    @Test("rclone bisync: the newer copy becomes current, path1 on equal dates")
    func rcloneCurrent() throws {
        let both = try group(["notes.md..path1", "notes.md..path2"])
        let early = Date(timeIntervalSince1970: 1_000), late = Date(timeIntervalSince1970: 2_000)
        func current(_ dates: [String: Date]) -> String? {
            SyncConflictNaming.copyBecomingCurrent(in: both) { dates[$0.name] }?.name
        }
        #expect(current(["notes.md..path1": early, "notes.md..path2": late]) == "notes.md..path2")
        #expect(current(["notes.md..path1": late, "notes.md..path2": early]) == "notes.md..path1")
        #expect(current(["notes.md..path1": late, "notes.md..path2": late]) == "notes.md..path1")
        #expect(current([:]) == "notes.md..path1")
        #expect(current(["notes.md..path2": early]) == "notes.md..path2", "an undated copy is older")

        let numbered = try group(["doc.txt.conflict2", "doc.txt.conflict1"])
        #expect(SyncConflictNaming.copyBecomingCurrent(in: numbered) { _ in early }?.name == "doc.txt.conflict1")
    }

    @Test("nothing becomes current while the original exists, or for other tools' copies")
    func noPromotion() throws {
        let present = try #require(SyncConflictNaming.conflictGroups(in: ["a.txt", "a.txt..path1"])["a.txt"])
        #expect(SyncConflictNaming.copyBecomingCurrent(in: present) { _ in .now } == nil)
        let syncthing = try group(["gone.sync-conflict-20261123-051644-SUBNBV7.txt"])
        #expect(SyncConflictNaming.copyBecomingCurrent(in: syncthing) { _ in .now } == nil)
    }
}

@Suite("The group of one original equals its entry among all groups")
struct SyncConflictSingleGroupTests {
    @Test("conflictGroup(of:in:) gives what conflictGroups(in:)[name] gives, for every name of a mixed listing")
    func sameAsAllGroups() {
        let listing = [
            "doc.txt", "doc.sync-conflict-20261123-051644-SUBNBV7.txt", "doc (conflicted copy 2026-11-23 051644).txt",
            "notes.md..path2", "notes.md..path1", "report.odt", "report-laptop.odt", "my.txt", "my-file.txt",
            "my-file-some-host-safeBackup-0001.txt", "archive.tar.gz", "archive.tar.sync-conflict-20261123-053032-7AI57XW.gz",
            ".hidden", ".sync-conflict-20261123-053032-7AI57XW.hidden", ".hidden (conflicted copy 2026-11-23 051644)",
            "noext", "noext.sync-conflict-20261123-053032-7AI57XW", "noext..path1", "doc.txt (conflict_on_2026-11-23)",
            "gone.sync-conflict-20261123-051644-SUBNBV7.txt", "caf\u{0}\u{E9}.txt", "caf\u{0}\u{E9}.txt..path1",
        ]
        let options = SyncConflictNamingOptions(oneDriveHostNames: ["laptop"])
        let all = SyncConflictNaming.conflictGroups(in: listing, options: options)
        for name in Set(listing + ["gone.txt"]) {
            #expect(SyncConflictNaming.conflictGroup(of: name, in: listing, options: options) == all[name], "\(name)")
        }
        #expect(all[".hidden"]?.copies.count == 2)
    }
}
