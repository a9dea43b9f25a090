import Foundation
import Testing
import TestSupport
import FoundationCompatibility
@testable import Ubiquity

@Suite("Key-value store: processes, devices, crashes, conflict copies, accounts", .serialized, .timeLimit(.minutes(3 * Polling.deadlineScale)))
struct KeyValueStoreProcessTests {
    /// Runs two `kv-write` workers at once (both released by one line each) and returns what each
    /// saw at the end, as `KEY=VALUE` lines.
    private func writeConcurrently(folder: URL, devices: (String, String), count: Int, shared: Int) throws -> ([String], [String]) {
        let first = try keyValueWorker(["kv-write", folder.path, devices.0, "p", "\(count)", "\(shared)"])
        let second = try keyValueWorker(["kv-write", folder.path, devices.1, "q", "\(count)", "\(shared)"])
        #expect(first.expect("ready") == "ready" && second.expect("ready") == "ready")
        first.send(); second.send()
        #expect(first.expect("done") == "done" && second.expect("done") == "done")
        first.send(); second.send()
        func lines(_ worker: ChildProcess) -> [String] {
            var lines: [String] = []
            while let line = worker.readLine(), line != "end" { lines.append(line) }
            worker.waitForExit()
            return lines
        }
        return (lines(first), lines(second))
    }

    private func checkNothingLost(_ views: ([String], [String]), folder: URL, count: Int, shared: Int) {
        let expectedKeys = Set((0..<count).flatMap { ["p-\($0)", "q-\($0)"] } + (0..<shared).map { "shared-\($0)" })
        for view in [views.0, views.1] {
            let keys = Set(view.map { String($0.prefix { $0 != "=" }) })
            #expect(keys == expectedKeys)
        }
        // Both writers, and a third reader, agree on every value — the ties too.
        #expect(views.0 == views.1)
        let reader = KeyValueStore(folder: folder, deviceIdentifier: "reader")
        for line in views.0 {
            let key = String(line.prefix { $0 != "=" }), value = String(line.dropFirst(key.count + 1))
            let read = reader.value(forKey: key)
            #expect(read == .string(value) || read == Int64(value).map { .integer($0) }, "\(key)")
        }
        for index in 0..<shared {
            #expect(["p", "q"].contains(reader.string(forKey: "shared-\(index)")))
        }
    }

    /// Two processes writing different and the same keys at once — of one device (one file) or
    /// of two devices (two files side by side): none lost, all agree.
    @Test("two processes writing at once: none lost, all agree", arguments: [
        ("device-1", "device-1", ["device-1.json"]),                   // two processes of one device
        ("device-1", "device-2", ["device-1.json", "device-2.json"]),  // two devices' files side by side
    ])
    func twoWritersAtOnce(first: String, second: String, files: [String]) throws {
        let folderScratch = try Scratch("kv")
        defer { folderScratch.remove() }
        let folder = folderScratch.url
        let views = try writeConcurrently(folder: folder, devices: (first, second), count: 40, shared: 10)
        checkNothingLost(views, folder: folder, count: 40, shared: 10)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == files)
    }

    @Test("another process's write is noticed with its reason: server change from this device, initial sync then server change from a new device")
    func externalChangesAndReasons() throws {
        let folderScratch = try Scratch("kv")
        defer { folderScratch.remove() }
        let folder = folderScratch.url
        let native = KeyValueStore(folder: folder, deviceIdentifier: "device-1")
        let recorder = ChangeRecorder(native)
        let apple = NSUbiquitousKeyValueStore(keyValueStore: native)
        let posted = NotificationRecorder(object: apple)
        func write(_ device: String, _ name: String) throws {
            let worker = try keyValueWorker(["kv-write", folder.path, device, name, "1", "0"])
            #expect(worker.expect("ready") == "ready")
            worker.send()
            #expect(worker.expect("done") == "done")
            worker.closeInput()
            worker.waitForExit()
        }
        try write("device-1", "same")
        recorder.wait { $0.count >= 1 }
        try write("device-2", "first")
        recorder.wait { $0.count >= 2 }
        try write("device-2", "second")
        let changes = recorder.wait { $0.count >= 3 }
        #expect(changes == [
            KeyValueStoreChange(reason: .serverChange, changedKeys: ["same-0"]),
            KeyValueStoreChange(reason: .initialSyncChange, changedKeys: ["first-0"]),
            KeyValueStoreChange(reason: .serverChange, changedKeys: ["second-0"]),
        ])
        #expect(native.value(forKey: "second-0") == .integer(0))
        let note = try #require(posted.first)
        #expect(note[NSUbiquitousKeyValueStoreChangeReasonKey] as? Int == NSUbiquitousKeyValueStoreServerChange)
        #expect(note[NSUbiquitousKeyValueStoreChangedKeysKey] as? [String] == ["same-0"])
    }

    @Test("kill -9 at random moments during synchronize: every synchronized key survives, the file stays readable")
    func killDuringSynchronize() throws {
        let folderScratch = try Scratch("kv")
        defer { folderScratch.remove() }
        let folder = folderScratch.url
        var generator = SystemRandomNumberGenerator()
        for round in 0..<6 {
            let worker = try keyValueWorker(["kv-sync-loop", folder.path, "device-1"])
            let target = Int.random(in: 1...25, using: &generator)
            var lastSynced = -1
            while lastSynced < target, let line = worker.readLine(), line.hasPrefix("synced ") {
                lastSynced = Int(line.dropFirst(7)) ?? lastSynced
            }
            // A random moment of the next set + synchronize (the worker never waits between them).
            let spin = Int.random(in: 0..<400_000, using: &generator)
            var sink = 0
            for index in 0..<spin { sink &+= index }
            #expect(sink >= 0)
            worker.kill9()
            #expect(lastSynced >= target, "round \(round)")
            let reader = KeyValueStore(folder: folder, deviceIdentifier: "reader")
            for index in 0...lastSynced {
                #expect(reader.string(forKey: "k-\(index)")?.hasPrefix("\(index) ") == true, "round \(round), k-\(index)")
            }
            let snapshot = try #require(try KeyValueStoreFile.read(folder.appending(path: "device-1.json").path))
            #expect(snapshot.file.entries.count >= lastSynced + 1)
            // Only the device file and, maybe, the dead save's temporary file (hidden, never read).
            let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            #expect(names.filter { !$0.hasPrefix(".") } == ["device-1.json"], "\(names)")
        }
        // The next writer saves fine and removes the dead writers' temporary files.
        let store = KeyValueStore(folder: folder, deviceIdentifier: "device-1")
        try store.set(.string("after"), forKey: "after")
        try store.synchronize()
        #expect(KeyValueStore(folder: folder, deviceIdentifier: "reader").string(forKey: "after") == "after")
    }

    @Test("a sync tool's conflict copy of a device file is merged into this device's file, then removed")
    func conflictCopyIsMergedAndRemoved() async throws {
        let folderScratch = try Scratch("kv")
        defer { folderScratch.remove() }
        let folder = folderScratch.url
        let other = KeyValueStore(folder: folder, deviceIdentifier: "device-2")
        try other.set(.string("current"), forKey: "both")
        try other.synchronize()
        let store = KeyValueStore(folder: folder, deviceIdentifier: "device-1")
        // Too young to remove for the whole first part, whatever the machine's load.
        store.conflictCopyRemovalDelay.withLock { $0 = .seconds(3600) }
        let recorder = ChangeRecorder(store)
        // What Syncthing leaves when device-2's file was changed on two machines at once.
        let copy = KeyValueStoreFile(device: "device-2", entries: [
            "only-in-copy": KeyValueStoreEntry(stamp: KeyValueStoreStamp(time: 10, device: "device-2"), value: .integer(1)),
            "both": KeyValueStoreEntry(stamp: KeyValueStoreStamp(time: 5, device: "device-2"), value: .string("older")),
        ])
        let copyName = "device-2.sync-conflict-20261126-101500-ABCDEFG.json"
        try copy.encoded().write(to: folder.appending(path: copyName))
        recorder.wait { $0.contains { $0.changedKeys.contains("only-in-copy") } }
        #expect(store.value(forKey: "only-in-copy") == .integer(1))
        #expect(store.string(forKey: "both") == "current")
        // Merged at once, removed only once it is old enough: the other device may still be
        // fetching it (Syncthing stops syncing the folder for a minute when that fetch fails).
        try store.synchronize()
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).contains(copyName))
        #expect(store.disk.withLock { $0.conflictCopiesMerged } == 1, "merged once, however often it is read")
        // Old enough now: the next refresh removes it.
        store.conflictCopyRemovalDelay.withLock { $0 = .zero }
        try store.synchronize()
        try await Polling.until("the merged copy removed once old enough") {
            (try? FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()) == ["device-1.json", "device-2.json"]
        }
        let own = try #require(try KeyValueStoreFile.read(folder.appending(path: "device-1.json").path))
        #expect(own.file.entries["only-in-copy"]?.value == .integer(1))
        #expect(store.disk.withLock { $0.conflictCopiesMerged } == 1)
    }

    @Test("signed out: values stay in memory; signing in writes them; another container is an account change")
    func accountChanges() throws {
        let folderScratch = try Scratch("kv")
        defer { folderScratch.remove() }
        let folder = folderScratch.url
        let config = folder.appending(path: "ubiquity.conf")
        let account = UbiquityAccount(environment: ["CLOUDDOCUMENTS_UBIQUITY_CONFIG": config.path])
        let store = KeyValueStore(account: account, deviceIdentifier: "device-1")
        let recorder = ChangeRecorder(store)
        try store.set(.string("offline"), forKey: "made-signed-out")
        #expect(throws: KeyValueStoreError.self) { try store.synchronize() }
        #expect(store.string(forKey: "made-signed-out") == "offline")

        // Another container already holds a key (written by another device).
        let second = folder.appending(path: "second/com.example.app/.clouddocuments/key-value-store")
        let seeded = KeyValueStore(folder: second, deviceIdentifier: "device-9")
        try seeded.set(.string("there"), forKey: "in-second")
        try seeded.synchronize()

        try "root = \(folder.path)/first\ncontainer = com.example.app\n".write(to: config, atomically: true, encoding: .utf8)
        try store.synchronize()
        #expect(store.folderURL?.path.hasPrefix(folder.path + "/first/com.example.app/") == true)
        #expect(KeyValueStore(folder: store.folderURL!, deviceIdentifier: "reader").string(forKey: "made-signed-out") == "offline")

        try "root = \(folder.path)/second\ncontainer = com.example.app\n".write(to: config, atomically: true, encoding: .utf8)
        try store.synchronize()
        let changes = recorder.wait { $0.contains { $0.reason == .accountChange } }
        #expect(changes.last == KeyValueStoreChange(reason: .accountChange, changedKeys: ["in-second", "made-signed-out"]))
        #expect(store.dictionaryRepresentation == ["in-second": .string("there")])
    }

    @Test("an observed store follows an account change as soon as the configuration changes, without synchronize()")
    func accountChangeNoticedAtOnce() throws {
        let folderScratch = try Scratch("kv")
        defer { folderScratch.remove() }
        let folder = folderScratch.url
        let config = folder.appending(path: "ubiquity.conf")
        try "root = \(folder.path)/first\ncontainer = com.example.app\n".write(to: config, atomically: true, encoding: .utf8)
        let second = folder.appending(path: "second/com.example.app/.clouddocuments/key-value-store")
        let seeded = KeyValueStore(folder: second, deviceIdentifier: "device-9")
        try seeded.set(.string("there"), forKey: "in-second")
        try seeded.synchronize()

        let account = UbiquityAccount(environment: ["CLOUDDOCUMENTS_UBIQUITY_CONFIG": config.path])
        let store = KeyValueStore(account: account, deviceIdentifier: "device-1")
        let recorder = ChangeRecorder(store)
        try "root = \(folder.path)/second\ncontainer = com.example.app\n".write(to: config, atomically: true, encoding: .utf8)
        let changes = recorder.wait { $0.contains { $0.reason == .accountChange } }
        #expect(changes.last == KeyValueStoreChange(reason: .accountChange, changedKeys: ["in-second"]))
        #expect(store.string(forKey: "in-second") == "there")
    }
}
