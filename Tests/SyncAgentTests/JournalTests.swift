import Foundation
import Testing
import TestSupport
@testable import SyncAgent

@Suite("Sync journal")
struct JournalTests {
    static func entry(_ path: String, size: Int64 = 1, tag: String = "\"a\"") -> JournalEntry {
        JournalEntry(path: path, isFolder: false,
                     local: LocalFingerprint(size: size, modifiedNanoseconds: 1_000_000_123, inode: 42, changedNanoseconds: 7),
                     remoteTag: RemoteTag(strong: tag), fileID: nil)
    }

    static func fileSize(_ url: URL) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: url.path)[.size]) as? Int) ?? -1
    }

    @Test("entries, removals, conflicts and the server identity survive a reopen")
    func reload() throws {
        let scratch = try Scratch("journal")
        defer { scratch.remove() }
        do {
            let journal = try SyncJournal(folder: scratch.url)
            try journal.put(Self.entry("a.txt"))
            try journal.put(Self.entry("b.txt"))
            try journal.put(Self.entry("a.txt", size: 9, tag: "\"a2\""))
            try journal.remove(path: "b.txt")
            try journal.putConflict(JournalConflict(itemPath: "a.txt", remotePath: ".clouddocs-conflicts/a.txt/x", versionID: "v"))
            try journal.setServer(JournalServerIdentity(rootFileID: "root-1"))
        }
        let reopened = try SyncJournal(folder: scratch.url)
        #expect(reopened.entries == ["a.txt": Self.entry("a.txt", size: 9, tag: "\"a2\"")])
        #expect(reopened.conflicts.count == 1)
        #expect(reopened.server.rootFileID == "root-1")
    }

    @Test("a torn last record is ignored, and appends after it are read back")
    func tornTail() throws {
        let scratch = try Scratch("journal")
        defer { scratch.remove() }
        let log = scratch.url.appending(path: "log")
        do {
            let journal = try SyncJournal(folder: scratch.url)
            try journal.put(Self.entry("kept.txt"))
            try journal.put(Self.entry("torn.txt"))
        }
        // Cut the last record in the middle (a kill -9 or power cut during the write).
        let handle = try FileHandle(forWritingTo: log)
        try handle.truncate(atOffset: UInt64(Self.fileSize(log) - 5))
        try handle.close()
        do {
            let journal = try SyncJournal(folder: scratch.url)
            #expect(Set(journal.entries.keys) == ["kept.txt"])
            try journal.put(Self.entry("after.txt"))
        }
        let reopened = try SyncJournal(folder: scratch.url)
        #expect(Set(reopened.entries.keys) == ["kept.txt", "after.txt"])
    }

    @Test("garbage after the last record (a bad checksum, a huge length) is ignored and cut")
    func garbage() throws {
        let scratch = try Scratch("journal")
        defer { scratch.remove() }
        let log = scratch.url.appending(path: "log")
        do {
            let journal = try SyncJournal(folder: scratch.url)
            try journal.put(Self.entry("kept.txt"))
        }
        let handle = try FileHandle(forWritingTo: log)
        try handle.seekToEnd()
        // A frame with a wrong checksum, then bytes claiming a 4 GiB record.
        try handle.write(contentsOf: Data([4, 0, 0, 0, 1, 2, 3, 4, 0x7B, 0x7D, 0x0A, 0x0A, 0xFF, 0xFF, 0xFF, 0xFF, 9, 9]))
        try handle.close()
        do {
            let journal = try SyncJournal(folder: scratch.url)
            #expect(Set(journal.entries.keys) == ["kept.txt"])
            try journal.put(Self.entry("after.txt"))
        }
        #expect(Set(try SyncJournal(folder: scratch.url).entries.keys) == ["kept.txt", "after.txt"])
    }

    @Test("a record whose checksum does not match is not applied, nor anything after it")
    func flippedByte() throws {
        let scratch = try Scratch("journal")
        defer { scratch.remove() }
        let log = scratch.url.appending(path: "log")
        do {
            let journal = try SyncJournal(folder: scratch.url)
            try journal.put(Self.entry("first.txt"))
            try journal.put(Self.entry("second.txt"))
        }
        var bytes = try Data(contentsOf: log)
        bytes[bytes.count - 3] ^= 0x01
        try bytes.write(to: log)
        #expect(Set(try SyncJournal(folder: scratch.url).entries.keys) == ["first.txt"])
    }

    @Test("compaction writes a snapshot and empties the log; a crash before the log is emptied replays harmlessly")
    func compaction() throws {
        let scratch = try Scratch("journal")
        defer { scratch.remove() }
        let log = scratch.url.appending(path: "log")
        let journal = try SyncJournal(folder: scratch.url)
        journal.flushesAppends = false
        for index in 0..<50 { try journal.put(Self.entry("file\(index).txt")) }
        try journal.remove(path: "file3.txt")
        let oldLog = try Data(contentsOf: log)
        try journal.compact()
        #expect(Self.fileSize(log) == 0)
        #expect(try SyncJournal(folder: scratch.url).entries.count == 49)
        // Killed between the snapshot's rename and the log's truncation: old log + new snapshot.
        try oldLog.write(to: log)
        let replayed = try SyncJournal(folder: scratch.url)
        #expect(replayed.entries == journal.entries)
        // A stray temporary snapshot (killed while writing it) is ignored.
        try Data([1, 2, 3]).write(to: scratch.url.appending(path: "snapshot.tmp"))
        #expect(try SyncJournal(folder: scratch.url).entries == journal.entries)
    }

    @Test("10,000 items: the log compacts itself and everything reloads")
    func manyItems() throws {
        let scratch = try Scratch("journal")
        defer { scratch.remove() }
        do {
            let journal = try SyncJournal(folder: scratch.url)
            journal.flushesAppends = false
            for batch in 0..<100 {
                try journal.put((0..<100).map { Self.entry("folder\(batch)/file\($0).txt") })
            }
            for index in 0..<100 { try journal.put(Self.entry("folder0/file\(index).txt", size: 2)) }
        }
        let log = scratch.url.appending(path: "log")
        #expect(Self.fileSize(log) < 10_000 * 200, "compaction keeps the log smaller than the items")
        let reopened = try SyncJournal(folder: scratch.url)
        #expect(reopened.entries.count == 10_000)
        #expect(reopened.entries["folder0/file7.txt"]?.local?.size == 2)
    }

    @Test("the frame format: length, CRC-32, payload")
    func framing() {
        #expect(CRC32.checksum(Data("123456789".utf8)) == 0xCBF4_3926)
        let frames = JournalFraming.frame(Data("ab".utf8)) + JournalFraming.frame(Data("c".utf8))
        let (payloads, valid) = JournalFraming.payloads(in: frames + Data([1, 2]))
        #expect(payloads == [Data("ab".utf8), Data("c".utf8)])
        #expect(valid == frames.count)
    }
}
