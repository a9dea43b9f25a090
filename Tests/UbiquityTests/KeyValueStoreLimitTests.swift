import Foundation
import Testing
@testable import Ubiquity

@Suite("Key-value store: Apple's limits")
struct KeyValueStoreLimitTests {
    @Test("keys: 64 bytes of UTF-8 are fine, 65 are refused with a quota-violation change; nothing changes")
    func keyLength() throws {
        let folderScratch = try Scratch("kv")
        defer { folderScratch.remove() }
        let folder = folderScratch.url
        let store = KeyValueStore(folder: folder, deviceIdentifier: "device-a")
        let recorder = ChangeRecorder(store)
        let longest = String(repeating: "é", count: 32)          // 64 bytes
        try store.set(.integer(1), forKey: longest)
        let tooLong = longest + "x"
        #expect(throws: KeyValueStoreError.keyTooLong(key: tooLong, bytes: 65)) { try store.set(.integer(2), forKey: tooLong) }
        let changes = recorder.wait { !$0.isEmpty }
        #expect(changes == [KeyValueStoreChange(reason: .quotaViolationChange, changedKeys: [tooLong])])
        #expect(store.dictionaryRepresentation == [longest: .integer(1)])
    }

    @Test("one value of exactly 1 MB fits and then nothing else does; a larger value is refused; what was stored stays")
    func valueAndTotalSize() throws {
        let folderScratch = try Scratch("kv")
        defer { folderScratch.remove() }
        let folder = folderScratch.url
        let store = KeyValueStore(folder: folder, deviceIdentifier: "device-a")
        let recorder = ChangeRecorder(store)
        let megabyte = Data(count: KeyValueStoreLimits.maximumValueSize)
        #expect(throws: KeyValueStoreError.quotaViolation(key: "big", limit: .valueSize(megabyte.count + 1))) {
            try store.set(.data(megabyte + Data([0])), forKey: "big")
        }
        try store.set(.data(megabyte), forKey: "big")
        #expect(throws: KeyValueStoreError.quotaViolation(key: "more", limit: .totalSize(megabyte.count + 1))) {
            try store.set(.bool(true), forKey: "more")
        }
        // Replacing with something no larger, and removing, are always allowed.
        try store.set(.data(Data(count: 10)), forKey: "big")
        try store.set(.bool(true), forKey: "more")
        try store.removeValue(forKey: "big")
        try store.synchronize()
        recorder.wait { $0.count >= 2 }
        #expect(recorder.keys(.quotaViolationChange) == ["big", "more"])
        #expect(KeyValueStore(folder: folder, deviceIdentifier: "device-b").dictionaryRepresentation == ["more": .bool(true)])
    }

    @Test("arrays and dictionaries nested deeper than the files can be read back are refused; the deepest allowed round-trips")
    func nestingDepth() throws {
        let folderScratch = try Scratch("kv")
        defer { folderScratch.remove() }
        let folder = folderScratch.url
        let store = KeyValueStore(folder: folder, deviceIdentifier: "device-a")
        let recorder = ChangeRecorder(store)
        func nested(_ depth: Int) -> KeyValueStoreValue {
            (0..<depth).reduce(KeyValueStoreValue.integer(1)) { inner, level in level % 2 == 0 ? .array([inner]) : .dictionary(["k": inner]) }
        }
        let deepest = KeyValueStoreLimits.maximumNestingDepth
        try store.set(.string("kept"), forKey: "other")
        try store.set(nested(deepest), forKey: "deep")
        #expect(throws: KeyValueStoreError.quotaViolation(key: "deeper", limit: .nestingDepth(deepest + 1))) {
            try store.set(nested(deepest + 1), forKey: "deeper")
        }
        #expect(throws: KeyValueStoreError.quotaViolation(key: "much deeper", limit: .nestingDepth(1_000))) {
            try store.set(nested(1_000), forKey: "much deeper")
        }
        try store.synchronize()
        recorder.wait { $0.count >= 2 }
        #expect(recorder.keys(.quotaViolationChange) == ["deeper", "much deeper"])
        let reader = KeyValueStore(folder: folder, deviceIdentifier: "device-b")
        #expect(reader.value(forKey: "other") == .string("kept"))
        let readBack = reader.value(forKey: "deep") == nested(deepest)
        #expect(readBack, "the deepest allowed value reads back")
        #expect(reader.value(forKey: "deeper") == nil)
    }

    @Test("1,024 keys fit, the 1,025th is refused, and replacing one of the 1,024 still works")
    func keyCount() throws {
        let folderScratch = try Scratch("kv")
        defer { folderScratch.remove() }
        let folder = folderScratch.url
        let store = KeyValueStore(folder: folder, deviceIdentifier: "device-a")
        for index in 0..<KeyValueStoreLimits.maximumKeyCount { try store.set(.integer(Int64(index)), forKey: "key-\(index)") }
        #expect(throws: KeyValueStoreError.quotaViolation(key: "one-more", limit: .keyCount(1025))) {
            try store.set(.integer(0), forKey: "one-more")
        }
        try store.set(.string("replaced"), forKey: "key-7")
        try store.synchronize()
        let reader = KeyValueStore(folder: folder, deviceIdentifier: "device-b")
        #expect(reader.dictionaryRepresentation.count == 1024)
        #expect(reader.value(forKey: "key-7") == .string("replaced"))
        #expect(reader.value(forKey: "one-more") == nil)
    }

    @Test("keys added on two devices at once may together go over: nothing is dropped, and further additions are refused")
    func concurrentWritesOverTheLimitLoseNothing() throws {
        let folderScratch = try Scratch("kv")
        defer { folderScratch.remove() }
        let folder = folderScratch.url
        let a = KeyValueStore(folder: folder, deviceIdentifier: "device-a")
        let b = KeyValueStore(folder: folder, deviceIdentifier: "device-b")
        for index in 0..<600 {
            try a.set(.integer(1), forKey: "a-\(index)")
            try b.set(.integer(2), forKey: "b-\(index)")
        }
        try a.synchronize()
        try b.synchronize()
        try a.synchronize()
        #expect(a.dictionaryRepresentation.count == 1200)
        #expect(throws: KeyValueStoreError.self) { try a.set(.integer(3), forKey: "c") }
        try a.removeValue(forKey: "a-0")
        #expect(a.dictionaryRepresentation.count == 1199)
    }
}
