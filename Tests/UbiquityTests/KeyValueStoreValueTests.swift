import Foundation
import Testing
import FoundationCompatibility
@testable import Ubiquity

@Suite("Key-value store: values, merging, Apple's API")
struct KeyValueStoreValueTests {
    static let sample: [String: KeyValueStoreValue] = [
        "string": .string("blue ✓"),
        "integer": .integer(.min),
        "double": .double(2.5),
        "nan": .double(.nan),
        "infinity": .double(-.infinity),
        "true": .bool(true),
        "data": .data(Data([0, 1, 2, 255])),
        "date": .date(Date(timeIntervalSince1970: 1_764_150_000.25)),
        "array": .array([.integer(1), .string("x"), .array([.bool(false)])]),
        "dictionary": .dictionary(["a": .double(1e-300), "b": .dictionary(["c": .data(Data())])]),
    ]

    @Test("every property-list type round-trips through the device file, and a second store reads it back")
    func typesRoundTrip() throws {
        let folderScratch = try Scratch("kv")
        defer { folderScratch.remove() }
        let folder = folderScratch.url
        let store = KeyValueStore(folder: folder, deviceIdentifier: "device-a")
        for (key, value) in Self.sample { try store.set(value, forKey: key) }
        try store.synchronize()
        let reader = KeyValueStore(folder: folder, deviceIdentifier: "device-b")
        let read = reader.dictionaryRepresentation
        #expect(Set(read.keys) == Set(Self.sample.keys))
        for (key, value) in Self.sample where key != "nan" { #expect(read[key] == value, "\(key)") }
        guard case .double(let nan)? = read["nan"] else { Issue.record("nan is not a double"); return }
        #expect(nan.isNaN)
    }

    @Test("the file's JSON: written and read back by hand, the same as Foundation's coders write a value; every cut of it, and nesting too deep, is refused")
    func fileJSON() throws {
        let awkward = "quote \" backslash \\ slash / newline \n tab \t nul \u{0} bell \u{7} é 𝄞 \u{2028}"
        var values = Self.sample
        values["awkward"] = .string(awkward)
        values[awkward] = .dictionary([awkward: .array([.string(awkward)])])
        let file = KeyValueStoreFile(device: "device-a", entries: values.reduce(into: [:]) { entries, pair in
            entries[pair.key] = KeyValueStoreEntry(stamp: KeyValueStoreStamp(time: 1_764_150_000_123_456_789, device: "device-a"), value: pair.value)
        }.merging(["gone": KeyValueStoreEntry(stamp: KeyValueStoreStamp(time: 1, device: "device-b"), value: nil)]) { $1 })
        let data = file.encoded()
        #expect((try? JSONSerialization.jsonObject(with: data)) != nil)       // valid JSON
        let read = try KeyValueStoreFile.decode(data, path: "test")
        #expect(read.device == "device-a" && read.entries.count == file.entries.count)
        for (key, entry) in file.entries where key != "nan" {
            #expect(read.entries[key] == entry, "\(key)")
        }
        #expect(read.entries["gone"]?.value == nil && read.entries["gone"]?.stamp.device == "device-b")

        // A value as Foundation's JSONEncoder writes it (it escapes `/`) reads the same.
        for (key, value) in values where key != "nan" {
            let foundation = try JSONEncoder().encode(value)
            let text = #"{"device":"x","entries":{"k":{"device":"x","time":5,"value":"# + String(decoding: foundation, as: UTF8.self) + "}},\"format\":1}"
            #expect(try KeyValueStoreFile.decode(Data(text.utf8), path: "test").entries["k"]?.value == value, "\(key)")
        }

        // Every cut of the file, and some damage, is refused with a reason.
        for length in stride(from: 0, to: data.count - 1, by: max(1, data.count / 300)) {
            #expect(throws: KeyValueStoreError.self) { try KeyValueStoreFile.decode(data.prefix(length), path: "cut") }
        }
        #expect(throws: KeyValueStoreError.self) {
            try KeyValueStoreFile.decode(Data((String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)).utf8), path: "deep")
        }
    }

    @Test("damaged device files are refused with a reason, never a crash", arguments: [
        #"{"format":2,"device":"x","entries":{}}"#, #"{"format":1,"entries":{"k":{"time":1}}}"#,
        #"{"format":1,"entries":{"k":{"time":1,"device":"x","value":{"colour":1}}}}"#,
        #"{"format":1,"entries":{"k":{"time":"1","device":"x","deleted":true}}}"#, "[1,2]", "\"\\ud800\"",
    ])
    func damagedFile(_ damaged: String) {
        #expect(throws: KeyValueStoreError.self) { try KeyValueStoreFile.decode(Data(damaged.utf8), path: "damaged") }
    }

    @Test("a date that is not finite (NaN, ±infinity) is written so that the device file stays readable, and reads back")
    func nonFiniteDates() throws {
        let folderScratch = try Scratch("kv")
        defer { folderScratch.remove() }
        let folder = folderScratch.url
        let store = KeyValueStore(folder: folder, deviceIdentifier: "device-a")
        try store.set(.string("kept"), forKey: "other")
        try store.set(.date(Date(timeIntervalSince1970: .infinity)), forKey: "future")
        try store.set(.date(Date(timeIntervalSince1970: -.infinity)), forKey: "past")
        try store.set(.array([.date(Date(timeIntervalSince1970: .nan))]), forKey: "nan")
        try store.synchronize()
        let reader = KeyValueStore(folder: folder, deviceIdentifier: "device-b")
        #expect(reader.value(forKey: "other") == .string("kept"))
        #expect(reader.value(forKey: "future") == .date(Date(timeIntervalSince1970: .infinity)))
        #expect(reader.value(forKey: "past") == .date(Date(timeIntervalSince1970: -.infinity)))
        guard case .array(let elements)? = reader.value(forKey: "nan"), case .date(let date)? = elements.first else {
            Issue.record("the NaN date did not read back"); return
        }
        #expect(date.timeIntervalSince1970.isNaN)
        // The same process, started again, can still write its own file.
        let again = KeyValueStore(folder: folder, deviceIdentifier: "device-a")
        try again.set(.integer(1), forKey: "later")
        try again.synchronize()
    }

    @Test("Apple's setters and typed getters, with Apple's conversions")
    func appleShapedAPI() throws {
        let folderScratch = try Scratch("kv")
        defer { folderScratch.remove() }
        let folder = folderScratch.url
        let store = NSUbiquitousKeyValueStore(keyValueStore: KeyValueStore(folder: folder, deviceIdentifier: "device-a"))
        store.set("123", forKey: "text")
        store.set(Int64(7), forKey: "long")
        store.set(2.67, forKey: "double")
        store.set(true, forKey: "flag")
        store.set(Data([9, 8]), forKey: "bytes")
        store.set([1, "two", 3.5] as [Any], forKey: "list")
        store.set(["k": "v", "n": 1] as [String: Any], forKey: "map")
        store.set(NSNumber(value: false) as Any, forKey: "number")
        #expect(store.synchronize())

        #expect(store.string(forKey: "text") == "123")
        #expect(store.longLong(forKey: "text") == 123)          // numeric string → integer
        #expect(store.longLong(forKey: "double") == 2)          // rounded down
        #expect(store.longLong(forKey: "flag") == 1)
        #expect(store.string(forKey: "long") == "7")
        #expect(store.double(forKey: "long") == 7)
        #expect(store.bool(forKey: "long"))
        #expect(!store.bool(forKey: "number"))
        #expect(store.bool(forKey: "flag"))
        #expect(store.data(forKey: "bytes") == Data([9, 8]))
        #expect(store.object(forKey: "long") as? Int == 7)
        #expect(store.object(forKey: "flag") as? Bool == true)
        let list = try #require(store.array(forKey: "list"))
        #expect(list.count == 3 && list[1] as? String == "two" && list[0] as? Int == 1)
        #expect(store.dictionary(forKey: "map")?["k"] as? String == "v")
        #expect(store.longLong(forKey: "missing") == 0 && store.string(forKey: "missing") == nil && !store.bool(forKey: "missing"))
        #expect(Set(store.dictionaryRepresentation.keys) == ["text", "long", "double", "flag", "bytes", "list", "map", "number"])

        store.removeObject(forKey: "text")
        store.set(nil as String?, forKey: "long")
        #expect(store.object(forKey: "text") == nil && store.object(forKey: "long") == nil)
        #expect(NSUbiquitousKeyValueStoreServerChange == 0 && NSUbiquitousKeyValueStoreInitialSyncChange == 1)
        #expect(NSUbiquitousKeyValueStoreQuotaViolationChange == 2 && NSUbiquitousKeyValueStoreAccountChange == 3)
    }

    @Test("a value that is not a property list is refused, changes nothing, and says which type")
    func nonPropertyListIsRefused() throws {
        let folderScratch = try Scratch("kv")
        defer { folderScratch.remove() }
        let folder = folderScratch.url
        struct Custom {}
        #expect(throws: KeyValueStoreError.self) { try KeyValueStoreValue(propertyList: Custom()) }
        #expect(throws: KeyValueStoreError.self) { try KeyValueStoreValue(propertyList: ["ok", URL(fileURLWithPath: "/")] as [Any]) }

        let native = KeyValueStore(folder: folder, deviceIdentifier: "device-a")
        let recorder = ChangeRecorder(native)
        let store = NSUbiquitousKeyValueStore(keyValueStore: native)
        let posted = NotificationRecorder(object: store)
        store.set("kept", forKey: "key")
        store.set(Custom(), forKey: "key")
        #expect(store.string(forKey: "key") == "kept")
        let note = try #require(posted.first)
        #expect(note[NSUbiquitousKeyValueStoreChangeReasonKey] as? Int == NSUbiquitousKeyValueStoreQuotaViolationChange)
        #expect(note[NSUbiquitousKeyValueStoreChangedKeysKey] as? [String] == ["key"])
        #expect(recorder.wait { !$0.isEmpty } == [KeyValueStoreChange(reason: .quotaViolationChange, changedKeys: ["key"])])
    }

    @Test("merging: the later stamp wins; equal times are won by the larger device; same time and device by the value; any order gives the same result")
    func mergeOrderIsTotalAndDeterministic() {
        func entry(_ time: Int64, _ device: String, _ value: KeyValueStoreValue?) -> KeyValueStoreEntry {
            KeyValueStoreEntry(stamp: KeyValueStoreStamp(time: time, device: device), value: value)
        }
        let writes = [
            entry(5, "a", .string("a5")), entry(7, "a", .string("a7")), entry(7, "b", .string("b7")),
            entry(7, "b", nil), entry(7, "b", .string("b7-other")), entry(6, "c", .string("c6")),
        ]
        var results: Set<String> = []
        for _ in 0..<50 {
            var merged: [String: KeyValueStoreEntry] = [:]
            for write in writes.shuffled() { KeyValueStoreEntry.merge(["k": write], into: &merged) }
            results.insert("\(merged["k"]!.stamp.time) \(merged["k"]!.stamp.device) \(String(describing: merged["k"]!.value))")
        }
        #expect(results.count == 1)
        #expect(results.first?.hasPrefix("7 b ") == true)
        // A deletion wins over an older value and loses to a newer one.
        var merged = ["k": entry(1, "a", .integer(1))]
        KeyValueStoreEntry.merge(["k": entry(2, "a", nil)], into: &merged)
        #expect(merged["k"]?.value == nil)
        KeyValueStoreEntry.merge(["k": entry(3, "b", .integer(3))], into: &merged)
        #expect(merged["k"]?.value == .integer(3))
    }

    @Test("the clock never goes back, even after seeing a stamp from a device whose clock is ahead")
    func hybridClock() {
        var clock = KeyValueStoreClock()
        let first = clock.next()
        clock.observe(first + 3_600_000_000_000)    // another device, an hour ahead
        let next = clock.next()
        #expect(next > first + 3_600_000_000_000)
        #expect(clock.next() > next)
        // A stamp at the end of time (a damaged file, a clock set centuries ahead): the clock stays
        // there rather than wrap around to the wall clock.
        clock.observe(.max)
        #expect(clock.next() == .max)
        #expect(clock.next() == .max)
    }

    @Test("device identifiers: the environment wins; otherwise one is made once and kept in the state folder")
    func deviceIdentifier() throws {
        let folderScratch = try Scratch("kv")
        defer { folderScratch.remove() }
        let folder = folderScratch.url
        #expect(try DeviceIdentifier.current(environment: ["CLOUDDOCUMENTS_DEVICE_ID": "laptop"]) == "laptop")
        #expect(throws: KeyValueStoreError.self) { try DeviceIdentifier.current(environment: ["CLOUDDOCUMENTS_DEVICE_ID": "a/b"]) }
        let environment = ["XDG_STATE_HOME": folder.path]
        let made = try DeviceIdentifier.current(environment: environment)
        #expect(DeviceIdentifier.isValid(made))
        #expect(try DeviceIdentifier.current(environment: environment) == made)
        #expect(FileManager.default.fileExists(atPath: folder.appending(path: "clouddocuments/device-id").path))
    }
}

/// Records the user info of `didChangeExternallyNotification`s posted for `object`.
final class NotificationRecorder: @unchecked Sendable {
    // @unchecked: `received` is only touched while `condition` is locked.
    private let condition = NSCondition()
    private var received: [[AnyHashable: Any]] = []
    private var token: (any NSObjectProtocol)?

    init(object: NSUbiquitousKeyValueStore) {
        token = NotificationCenter.default.addObserver(forName: NSUbiquitousKeyValueStore.didChangeExternallyNotification,
                                                       object: object, queue: nil) { [weak self] note in
            guard let self else { return }
            self.condition.lock()
            self.received.append(note.userInfo ?? [:])
            self.condition.broadcast()
            self.condition.unlock()
        }
    }

    deinit { if let token { NotificationCenter.default.removeObserver(token) } }

    /// The first notification's user info, waiting until one is posted (from the store's
    /// notification queue); nil only when the hang guard runs out.
    var first: [AnyHashable: Any]? {
        let deadline = Date().addingTimeInterval(60)
        condition.lock()
        defer { condition.unlock() }
        while received.isEmpty {
            if !condition.wait(until: deadline) { break }
        }
        return received.first
    }
}
