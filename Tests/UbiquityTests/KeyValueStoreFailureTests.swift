import Foundation
import Glibc
import Testing
@testable import Ubiquity

@Suite("Key-value store: damaged, vanished and unwritable files", .serialized)
struct KeyValueStoreFailureTests {
    @Test("another device's file gone for a while (a sync tool's delete-then-rename) keeps its keys and reports nothing")
    func vanishedFileKeepsItsKeys() throws {
        let folderScratch = try Scratch("kv")
        defer { folderScratch.remove() }
        let folder = folderScratch.url
        let other = KeyValueStore(folder: folder, deviceIdentifier: "device-2")
        try other.set(.string("kept"), forKey: "k")
        try other.synchronize()
        let store = KeyValueStore(folder: folder, deviceIdentifier: "device-1")
        let recorder = ChangeRecorder(store)
        let file = folder.appending(path: "device-2.json")
        let saved = try Data(contentsOf: file)
        try FileManager.default.removeItem(at: file)
        try store.synchronize()
        #expect(store.string(forKey: "k") == "kept")
        try saved.write(to: file)
        try other.set(.string("newer"), forKey: "k")
        try other.synchronize()
        let changes = recorder.wait { $0.contains { $0.changedKeys == ["k"] } }
        #expect(changes == [KeyValueStoreChange(reason: .serverChange, changedKeys: ["k"])])
        #expect(store.string(forKey: "k") == "newer")
    }

    @Test("a huge file of another device (1 TB, sparse) is skipped without being read into memory; the other devices' keys load")
    func hugeFileIsSkipped() throws {
        let folderScratch = try Scratch("kv")
        defer { folderScratch.remove() }
        let folder = folderScratch.url
        let other = KeyValueStore(folder: folder, deviceIdentifier: "device-3")
        try other.set(.string("kept"), forKey: "k")
        try other.synchronize()
        let huge = folder.appending(path: "device-2.json").path
        let descriptor = open(huge, O_CREAT | O_WRONLY | O_CLOEXEC, 0o644)
        #expect(descriptor >= 0)
        #expect(ftruncate(descriptor, 1 << 40) == 0)
        close(descriptor)
        let store = KeyValueStore(folder: folder, deviceIdentifier: "device-1")
        try store.synchronize()
        #expect(store.string(forKey: "k") == "kept")
        #expect(store.disk.withLock { $0.skippedFiles["device-2.json"] } != nil)
    }

    @Test("the store folder deleted and made again: an observer keeps hearing another device's changes")
    func folderDeletedAndMadeAgain() throws {
        let folderScratch = try Scratch("kv")
        defer { folderScratch.remove() }
        let folder = folderScratch.url
        let store = KeyValueStore(folder: folder, deviceIdentifier: "device-1")
        let recorder = ChangeRecorder(store)
        try FileManager.default.removeItem(at: folder)
        let other = KeyValueStore(folder: folder, deviceIdentifier: "device-2")   // makes the folder again
        try other.set(.string("after"), forKey: "k")
        try other.synchronize()
        let changes = recorder.wait { $0.contains { $0.changedKeys.contains("k") } }
        #expect(changes.contains { $0.changedKeys.contains("k") }, "\(changes)")
        #expect(store.string(forKey: "k") == "after")
    }

    @Test("a damaged file of another device is skipped; this device's damaged file is left alone and synchronize throws, keeping the changes")
    func damagedFiles() throws {
        let folderScratch = try Scratch("kv")
        defer { folderScratch.remove() }
        let folder = folderScratch.url
        try Data(#"{"format":1,"device":"device-2","entries":{"#.utf8).write(to: folder.appending(path: "device-2.json"))
        try Data(#"{"format":99}"#.utf8).write(to: folder.appending(path: "device-1.json"))
        let store = KeyValueStore(folder: folder, deviceIdentifier: "device-1")
        try store.set(.integer(1), forKey: "pending")
        #expect(throws: KeyValueStoreError.self) { try store.synchronize() }
        #expect(store.value(forKey: "pending") == .integer(1))
        #expect(try String(contentsOf: folder.appending(path: "device-1.json"), encoding: .utf8) == #"{"format":99}"#)
        // Once this device's file is usable again, the pending change is written.
        try FileManager.default.removeItem(at: folder.appending(path: "device-1.json"))
        try store.synchronize()
        #expect(KeyValueStore(folder: folder, deviceIdentifier: "reader").value(forKey: "pending") == .integer(1))
    }

    @Test("a full disk: synchronize throws writeFailed, the file and the changes are kept, and a later synchronize writes them",
          .enabled(if: geteuid() == 0, "needs root to mount a small tmpfs"))
    func fullDisk() throws {
        let outerScratch = try Scratch("kv")
        defer { outerScratch.remove() }
        let outer = outerScratch.url
        let point = outer.appending(path: "mnt")
        try FileManager.default.createDirectory(at: point, withIntermediateDirectories: true)
        guard mount("tmpfs", point.path, "tmpfs", 0, "size=64k") == 0 else {
            Issue.record("mount failed: errno \(errno)")
            return
        }
        defer { _ = umount2(point.path, Int32(MNT_DETACH)) }
        let store = KeyValueStore(folder: point, deviceIdentifier: "device-1")
        try store.set(.string("small"), forKey: "small")
        try store.synchronize()
        try store.set(.data(Data(count: 100_000)), forKey: "big")
        #expect {
            try store.synchronize()
        } throws: { error in
            guard case .writeFailed? = error as? KeyValueStoreError else { return false }
            return true
        }
        #expect(store.data(forKey: "big")?.count == 100_000)
        #expect(KeyValueStore(folder: point, deviceIdentifier: "reader").string(forKey: "small") == "small")
        #expect(try FileManager.default.contentsOfDirectory(atPath: point.path) == ["device-1.json"])
        try store.set(.data(Data(count: 10)), forKey: "big")
        try store.synchronize()
        #expect(KeyValueStore(folder: point, deviceIdentifier: "reader").data(forKey: "big")?.count == 10)
    }
}
