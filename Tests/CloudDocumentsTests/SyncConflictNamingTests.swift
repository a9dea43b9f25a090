import Foundation
import SystemSupport
import Testing
@testable import CloudDocuments

/// One row: a conflict copy's name and what must be read from it.
struct ConflictNameCase: Sendable, CustomTestStringConvertible {
    let name: String
    let original: String
    let scheme: SyncConflictScheme
    var party: String?
    /// The expected `savingComputer` (`localizedNameOfSavingComputer`).
    var saving: String?
    /// The expected timestamp's description, `YYYY-MM-DD[ HH:MM:SS]`.
    var stamp: String?
    var number: Int?
    var wasDeleted = false
    var testDescription: String { name }
}

/// The OneDrive host names the tables are parsed with.
private let hosts = SyncConflictNamingOptions(oneDriveHostNames: ["laptop", "my-desk.example.org"])

// Names verified with real Syncthing 1.19.2 (../shared/peers/README.md), and variations.
let syncthingCases: [ConflictNameCase] = [
    .init(name: "doc.sync-conflict-20261123-051644-SUBNBV7.txt", original: "doc.txt", scheme: .syncthing,
          party: "SUBNBV7", stamp: "2026-11-23 05:16:44"),
    .init(name: "archive.tar.sync-conflict-20261123-053032-7AI57XW.gz", original: "archive.tar.gz",
          scheme: .syncthing, party: "7AI57XW", stamp: "2026-11-23 05:30:32"),
    .init(name: "noext.sync-conflict-20261123-053032-7AI57XW", original: "noext", scheme: .syncthing,
          party: "7AI57XW", stamp: "2026-11-23 05:30:32"),
    .init(name: ".sync-conflict-20261123-053032-7AI57XW.hidden", original: ".hidden", scheme: .syncthing,
          party: "7AI57XW", stamp: "2026-11-23 05:30:32"),
    .init(name: "sp ace.sync-conflict-20261123-053032-7AI57XW.txt", original: "sp ace.txt", scheme: .syncthing,
          party: "7AI57XW", stamp: "2026-11-23 05:30:32"),
    .init(name: "Info.sync-conflict-20261123-053032-7AI57XW.plist", original: "Info.plist", scheme: .syncthing,
          party: "7AI57XW", stamp: "2026-11-23 05:30:32"),
    .init(name: "a.b.c.sync-conflict-20250101-000000-3FSG5FT.d", original: "a.b.c.d", scheme: .syncthing,
          party: "3FSG5FT", stamp: "2025-01-01 00:00:00"),
    .init(name: "Résumé – 履歴書.sync-conflict-20261231-235959-ABCDEFG.md", original: "Résumé – 履歴書.md",
          scheme: .syncthing, party: "ABCDEFG", stamp: "2026-12-31 23:59:59"),
    .init(name: "cafe\u{301}.sync-conflict-20261123-051644-SUBNBV7.\u{301}txt", original: "cafe\u{301}.\u{301}txt",
          scheme: .syncthing, party: "SUBNBV7", stamp: "2026-11-23 05:16:44"),
    .init(name: "🙂.sync-conflict-20261123-051644-SUBNBV7", original: "🙂", scheme: .syncthing,
          party: "SUBNBV7", stamp: "2026-11-23 05:16:44"),
    .init(name: "a.sync-conflict-20261123-051644-SUBNBV7.", original: "a.", scheme: .syncthing,
          party: "SUBNBV7", stamp: "2026-11-23 05:16:44"),
]

let nextcloudCases: [ConflictNameCase] = [
    .init(name: "report (conflicted copy 2026-11-23 051644).txt", original: "report.txt", scheme: .nextcloud,
          stamp: "2026-11-23 05:16:44"),
    .init(name: "report (conflicted copy alice 2026-11-23 051644).txt", original: "report.txt",
          scheme: .nextcloud, party: "alice", saving: "alice", stamp: "2026-11-23 05:16:44"),
    .init(name: "Thesis (conflicted copy Alice Smith 2024-02-29 120000).odt", original: "Thesis.odt",
          scheme: .nextcloud, party: "Alice Smith", saving: "Alice Smith", stamp: "2024-02-29 12:00:00"),
    .init(name: "archive.tar (conflicted copy 2026-11-23 051644).gz", original: "archive.tar.gz",
          scheme: .nextcloud, stamp: "2026-11-23 05:16:44"),
    .init(name: ".hidden (conflicted copy 2026-11-23 051644)", original: ".hidden", scheme: .nextcloud,
          stamp: "2026-11-23 05:16:44"),
    .init(name: "noext (conflicted copy 2026-11-23 051644)", original: "noext", scheme: .nextcloud,
          stamp: "2026-11-23 05:16:44"),
    .init(name: "notes (draft) (conflicted copy bob 2026-01-02 030405).md", original: "notes (draft).md",
          scheme: .nextcloud, party: "bob", saving: "bob", stamp: "2026-01-02 03:04:05"),
    .init(name: "Übersicht (conflicted copy Jörg 2026-11-23 051644).ods", original: "Übersicht.ods",
          scheme: .nextcloud, party: "Jörg", saving: "Jörg", stamp: "2026-11-23 05:16:44"),
    // The scheme of clients before 2.5.
    .init(name: "doc_conflict-20261123-051644.txt", original: "doc.txt", scheme: .nextcloudLegacy,
          stamp: "2026-11-23 05:16:44"),
    .init(name: "doc_conflict_alice-20261123-051644.txt", original: "doc.txt", scheme: .nextcloudLegacy,
          party: "alice", saving: "alice", stamp: "2026-11-23 05:16:44"),
    .init(name: "noext_conflict-20261123-051644", original: "noext", scheme: .nextcloudLegacy,
          stamp: "2026-11-23 05:16:44"),
    .init(name: "my_conflict_notes_conflict-20200101-120000.txt", original: "my_conflict_notes.txt",
          scheme: .nextcloudLegacy, stamp: "2020-01-01 12:00:00"),
    .init(name: "doc_conflict_j.smith-20200101-101010", original: "doc", scheme: .nextcloudLegacy,
          party: "j.smith", saving: "j.smith", stamp: "2020-01-01 10:10:10"),
    .init(name: "doc_conflict_jean-luc-20200101-101010.txt", original: "doc.txt", scheme: .nextcloudLegacy,
          party: "jean-luc", saving: "jean-luc", stamp: "2020-01-01 10:10:10"),
    .init(name: "archive.tar_conflict-20200101-101010.gz", original: "archive.tar.gz", scheme: .nextcloudLegacy,
          stamp: "2020-01-01 10:10:10"),
]

let dropboxCases: [ConflictNameCase] = [
    .init(name: "foo (Miguel Mota's conflicted copy 2014-06-17).txt", original: "foo.txt", scheme: .dropbox,
          party: "Miguel Mota", saving: "Miguel Mota", stamp: "2014-06-17"),
    .init(name: "Budget (John’s conflicted copy 2019-01-01).xlsx", original: "Budget.xlsx", scheme: .dropbox,
          party: "John", saving: "John", stamp: "2019-01-01"),
    .init(name: "Budget (John's conflicted copy 2019-01-01 (1)).xlsx", original: "Budget.xlsx", scheme: .dropbox,
          party: "John", saving: "John", stamp: "2019-01-01", number: 1),
    .init(name: "notes (John (Work)'s conflicted copy 2020-02-02).txt", original: "notes.txt", scheme: .dropbox,
          party: "John (Work)", saving: "John (Work)", stamp: "2020-02-02"),
    .init(name: "Makefile (build-server's conflicted copy 2020-02-02)", original: "Makefile", scheme: .dropbox,
          party: "build-server", saving: "build-server", stamp: "2020-02-02"),
    .init(name: "archive.tar (ann's conflicted copy 2020-02-02).gz", original: "archive.tar.gz", scheme: .dropbox,
          party: "ann", saving: "ann", stamp: "2020-02-02"),
    .init(name: "foo (bar) (ann's conflicted copy 2020-02-02).txt", original: "foo (bar).txt", scheme: .dropbox,
          party: "ann", saving: "ann", stamp: "2020-02-02"),
    .init(name: "写真 (Léa's conflicted copy 2021-07-14).jpg", original: "写真.jpg", scheme: .dropbox,
          party: "Léa", saving: "Léa", stamp: "2021-07-14"),
]

let unisonCases: [ConflictNameCase] = [
    .init(name: "doc.txt (conflict_on_2026-11-23)", original: "doc.txt", scheme: .unison, stamp: "2026-11-23"),
    .init(name: "doc.txt (conflict #1_on_2026-11-23)", original: "doc.txt", scheme: .unison,
          stamp: "2026-11-23", number: 1),
    .init(name: "doc.txt (conflict_on_2026-11-23_was_deleted)", original: "doc.txt", scheme: .unison,
          stamp: "2026-11-23", wasDeleted: true),
    .init(name: ".bashrc (conflict #12_on_2026-01-31)", original: ".bashrc", scheme: .unison,
          stamp: "2026-01-31", number: 12),
    .init(name: "a (b) (conflict_on_2026-01-31)", original: "a (b)", scheme: .unison, stamp: "2026-01-31"),
]

let rcloneCases: [ConflictNameCase] = [
    .init(name: "doc.txt..path1", original: "doc.txt", scheme: .rcloneBisyncPath, number: 1),
    .init(name: "doc.txt..path2", original: "doc.txt", scheme: .rcloneBisyncPath, number: 2),
    .init(name: "noext..path1", original: "noext", scheme: .rcloneBisyncPath, number: 1),
    .init(name: ".hidden..path2", original: ".hidden", scheme: .rcloneBisyncPath, number: 2),
    .init(name: "a...path1", original: "a.", scheme: .rcloneBisyncPath, number: 1),
    .init(name: "archive.tar.gz..path2", original: "archive.tar.gz", scheme: .rcloneBisyncPath, number: 2),
    .init(name: "doc.txt.conflict1", original: "doc.txt", scheme: .rcloneBisyncNumbered, number: 1),
    .init(name: "doc.txt.conflict2", original: "doc.txt", scheme: .rcloneBisyncNumbered, number: 2),
    .init(name: "doc.txt.conflict13", original: "doc.txt", scheme: .rcloneBisyncNumbered, number: 13),
]

// Parsed with `hosts`: laptop and my-desk.example.org.
let oneDriveCases: [ConflictNameCase] = [
    .init(name: "doc-laptop-safeBackup-0001.txt", original: "doc.txt", scheme: .oneDriveSafeBackup,
          party: "laptop", saving: "laptop", number: 1),
    .init(name: "my-report-laptop-safeBackup-0002.txt", original: "my-report.txt", scheme: .oneDriveSafeBackup,
          party: "laptop", saving: "laptop", number: 2),
    .init(name: ".hidden-laptop-safeBackup-0001", original: ".hidden", scheme: .oneDriveSafeBackup,
          party: "laptop", saving: "laptop", number: 1),
    .init(name: "archive.tar-laptop-safeBackup-0001.gz", original: "archive.tar.gz", scheme: .oneDriveSafeBackup,
          party: "laptop", saving: "laptop", number: 1),
    .init(name: "doc-my-desk.example.org-safeBackup-1000.txt", original: "doc.txt", scheme: .oneDriveSafeBackup,
          party: "my-desk.example.org", saving: "my-desk.example.org", number: 1000),
    .init(name: "doc-laptop.txt", original: "doc.txt", scheme: .oneDriveLegacy,
          party: "laptop", saving: "laptop", number: 1),
    .init(name: "doc-laptop-2.txt", original: "doc.txt", scheme: .oneDriveLegacy,
          party: "laptop", saving: "laptop", number: 2),
    .init(name: "doc-my-desk.example.org.txt", original: "doc.txt", scheme: .oneDriveLegacy,
          party: "my-desk.example.org", saving: "my-desk.example.org", number: 1),
    .init(name: "noext-my-desk.example.org", original: "noext", scheme: .oneDriveLegacy,
          party: "my-desk.example.org", saving: "my-desk.example.org", number: 1),
    .init(name: "noext-laptop-3", original: "noext", scheme: .oneDriveLegacy,
          party: "laptop", saving: "laptop", number: 3),
    .init(name: ".profile-laptop", original: ".profile", scheme: .oneDriveLegacy,
          party: "laptop", saving: "laptop", number: 1),
]

/// Names that look like conflict copies but are not (user-made names, truncated or malformed tags).
let notConflictCopies: [String] = [
    "plain.txt", ".hidden", "noext", "Résumé.txt", "my (copy).txt",
    // Syncthing-like
    "report.sync-conflict.txt", "report.sync-conflict-notes.txt",
    "doc.sync-conflict-2026112-051644-SUBNBV7.txt", "doc.sync-conflict-20261123-05164-SUBNBV7.txt",
    "doc.sync-conflict-20261123-051644-subnbv7.txt", "doc.sync-conflict-20261323-051644-SUBNBV7.txt",
    "doc.sync-conflict-20261123-251644-SUBNBV7.txt", "doc.sync-conflict-20261123-051644-SUBNBV.txt",
    "doc.sync-conflict-20261123-051644-SUBNBV7x.txt", "doc.sync-conflict-20261123-051644-SUBNB-7.txt",
    ".sync-conflict-20261123-053032-7AI57XW", "doc_sync-conflict-20261123-051644-SUBNBV7.txt",
    // Nextcloud-like
    "notes (conflicted copy).txt", "doc (conflicted copy 2026-11-23).txt",
    "doc (conflicted copy 2026-11-23 0516).txt", "doc (conflicted copy 2026-11-23 051644.txt",
    "meeting (conflicted copy 2026-11-23 051644) notes.txt", "doc (conflicted copy 2026-11-23 051644).tar.gz",
    "doc (conflicted copy (bob) 2026-11-23 051644).txt", "(conflicted copy 2026-11-23 051644).txt",
    "doc_conflict.txt", "doc_conflict-2026-11-23.txt", "doc_conflict-20261123.txt",
    "doc_conflict_-20261123-051644.txt", "_conflict-20261123-051644.txt", "doc_conflicted-20261123-051644.txt",
    // Dropbox-like
    "notes (John's conflicted copy).txt", "notes (John's conflicted copy 2014-6-17).txt",
    "notes (conflicted copy 2014-06-17).txt", "notes (John's conflicted copy 2014-06-17) v2.txt",
    "notes ('s conflicted copy 2014-06-17).txt", "notes(John's conflicted copy 2014-06-17).txt",
    "(John's conflicted copy 2014-06-17).txt",
    // Unison-like
    "doc.txt (conflict)", "doc.txt (conflict_on_2026-11-23) copy", "doc.txt (conflict_on_2026-11-23",
    "doc.txt (conflict #_on_2026-11-23)", "doc.txt (conflict_on_2026-13-23)",
    // rclone-like
    "doc.txt..path3", "..path1", "doc.txt.path1", "doc.txt.conflict0", "doc.txt.conflict",
    "doc.txt.conflict01", "doc.conflict1.txt", ".conflict1",
    // OneDrive-like, without the host in the set
    "budget-desktop.txt", "budget-desktop-safeBackup-0001.txt", "doc-laptop-safeBackup-1.txt",
    "doc-laptop-safeBackup-0001.tar.gz", "laptop-safeBackup-0001.txt", "-laptop.txt", "doc-laptop-01.txt",
    "doc-laptopx.txt",
    // Not one name
    "dir/doc.sync-conflict-20261123-051644-SUBNBV7.txt", "",
]

@Suite("Conflict copy names of sync tools")
struct SyncConflictNamingTests {
    func check(_ expected: ConflictNameCase, options: SyncConflictNamingOptions = hosts) {
        guard let copy = SyncConflictNaming.conflictCopy(named: expected.name, options: options) else {
            Issue.record("\(expected.name) is not recognised")
            return
        }
        #expect(copy.name == expected.name)
        #expect(copy.originalName == expected.original)
        #expect(copy.scheme == expected.scheme)
        #expect(copy.tool == expected.scheme.tool)
        #expect(copy.party == expected.party)
        #expect(copy.savingComputer == expected.saving)
        #expect(copy.timestamp?.description == expected.stamp)
        #expect(copy.number == expected.number)
        #expect(copy.originalWasDeleted == expected.wasDeleted)
        #expect(SyncConflictNaming.isHiddenFromPresenters(expected.name, options: options))
        #expect(SyncConflictNaming.conflictCopy(named: expected.original, options: options) == nil,
                "the original \(expected.original) is no conflict copy")
    }

    @Test("Syncthing", arguments: syncthingCases)
    func syncthing(_ expected: ConflictNameCase) { check(expected, options: .init()) }

    @Test("Syncthing's device ID names the winner, not the saver of the copy")
    func syncthingDeviceIsNotTheSavingComputer() throws {
        let copy = try #require(SyncConflictNaming.conflictCopy(named: "doc.sync-conflict-20261123-051644-SUBNBV7.txt"))
        #expect(copy.partyRole == .madeTheCurrentVersion)
        #expect(copy.savingComputer == nil)
    }

    @Test("Nextcloud and ownCloud, both schemes", arguments: nextcloudCases)
    func nextcloud(_ expected: ConflictNameCase) { check(expected, options: .init()) }

    @Test("Dropbox (English)", arguments: dropboxCases)
    func dropbox(_ expected: ConflictNameCase) { check(expected, options: .init()) }

    @Test("Unison", arguments: unisonCases)
    func unison(_ expected: ConflictNameCase) { check(expected, options: .init()) }

    @Test("rclone bisync", arguments: rcloneCases)
    func rclone(_ expected: ConflictNameCase) { check(expected, options: .init()) }

    @Test("OneDrive (abraunegg client) with known host names", arguments: oneDriveCases)
    func oneDrive(_ expected: ConflictNameCase) { check(expected) }

    @Test("OneDrive copies need a known host name", arguments: oneDriveCases)
    func oneDriveWithoutHosts(_ expected: ConflictNameCase) {
        #expect(SyncConflictNaming.conflictCopy(named: expected.name) == nil)
    }

    @Test("names that are not conflict copies", arguments: notConflictCopies)
    func notAConflictCopy(_ name: String) {
        #expect(SyncConflictNaming.conflictCopy(named: name, options: hosts) == nil)
    }

    @Test("the other schemes do not depend on the options")
    func otherSchemesIgnoreHosts() {
        for expected in syncthingCases + nextcloudCases + dropboxCases + unisonCases + rcloneCases {
            #expect(SyncConflictNaming.conflictCopy(named: expected.name, options: hosts)?.originalName
                    == expected.original, "\(expected.name)")
        }
    }

    @Test("the change monitor's quick test never rules out a conflict copy of a watched name",
          arguments: syncthingCases + nextcloudCases + dropboxCases + unisonCases + rcloneCases + oneDriveCases)
    func monitorQuickTestKeepsCopies(_ expected: ConflictNameCase) {
        #expect(SyncToolRules().mayBeConflictCopy(named: expected.name, ofAnyOf: [expected.original]))
        #expect(SyncToolRules().mayBeConflictCopy(named: expected.name, ofAnyOf: ["unrelated.bin", expected.original]))
    }

    @Test("the change monitor's quick test rules out saves' temporary files and other names", arguments: [
        ".doc.txt.cdsave-0123456789ab", ".raw-save-4242", "other.txt", "notes.sync-conflict-20261123-051644-SUBNBV7.txt", "",
    ])
    func monitorQuickTestRulesOut(_ name: String) {
        #expect(!SyncToolRules().mayBeConflictCopy(named: name, ofAnyOf: ["doc.txt"]))
    }

    @Test("the change monitor's quick test keeps a copy of a name that starts with a dot")
    func monitorQuickTestKeepsCopiesOfHiddenNames() {
        #expect(SyncToolRules().mayBeConflictCopy(named: ".sync-conflict-20261123-051644-SUBNBV7.bashrc", ofAnyOf: [".bashrc"]))
    }

    @Test("names that are not UTF-8 keep their bytes")
    func rawBytes() throws {
        let stem: [UInt8] = [0x66, 0xFF, 0xC3]  // "f", then two bytes that are not UTF-8
        let syncthing = stem + Array(".sync-conflict-20261123-051644-SUBNBV7.t".utf8) + [0xE9]
        let copy = try #require(SyncConflictNaming.conflictCopy(namedBytes: syncthing))
        #expect(PathBytes.bytes(of: copy.originalName) == stem + Array(".t".utf8) + [0xE9])
        #expect(PathBytes.bytes(of: copy.name) == syncthing)

        let user: [UInt8] = [0x4A, 0xF6, 0x72, 0x67]  // "Jörg" in Latin-1
        let dropbox = stem + Array(" (".utf8) + user + Array("'s conflicted copy 2020-02-02).txt".utf8)
        let dropboxCopy = try #require(SyncConflictNaming.conflictCopy(namedBytes: dropbox))
        #expect(PathBytes.bytes(of: dropboxCopy.originalName) == stem + Array(".txt".utf8))
        #expect(PathBytes.bytes(of: try #require(dropboxCopy.party)) == user)

        #expect(SyncConflictNaming.conflictCopy(namedBytes: Array("doc.txt..path1".utf8) + [0]) == nil,
                "a NUL is no part of a name")
    }

    @Test("the timestamp as a date in a time zone")
    func timestampDate() throws {
        let copy = try #require(SyncConflictNaming.conflictCopy(named: "doc.sync-conflict-20261123-051644-SUBNBV7.txt"))
        let utc = try #require(TimeZone(identifier: "UTC"))
        #expect(copy.timestamp?.date(in: utc) == Date(timeIntervalSince1970: 1_795_411_004))
        let dateOnly = SyncConflictTimestamp(year: 2026, month: 11, day: 23)
        #expect(dateOnly.date(in: utc) == Date(timeIntervalSince1970: 1_795_392_000))
    }

    @Test("this machine's host name is the default OneDrive host")
    func thisMachine() throws {
        let host = try #require(SyncConflictNaming.localHostName())
        let copy = SyncConflictNaming.conflictCopy(named: "doc-\(host)-safeBackup-0001.txt", options: .thisMachine)
        #expect(copy?.originalName == "doc.txt")
        #expect(copy?.savingComputer == host)
    }
}
