import Foundation
import Testing
import TestSupport
@testable import Ubiquity

// Real Syncthing (SyncthingPair, Tests/TestSupport): two linked instances on 127.0.0.1, each
// syncing one "device"'s ubiquity root. Serialized: each test runs a pair of its own.

@Suite("Real Syncthing: the key-value store between two devices", .serialized, .timeLimit(.minutes(3)),
       .enabled(if: RequiredTool.syncthing.isInstalledOrRequired, Comment(rawValue: RequiredTool.syncthing.missingMessage)))
struct KeyValueSyncthingTests {
    static let container = "com.example.app"

    /// The environment of `clouddocs` run as `side`'s device.
    private func environment(_ pair: SyncthingPair, _ side: SyncthingPair.Side) -> [String: String] {
        ProcessInfo.processInfo.environment.merging([
            "CLOUDDOCUMENTS_UBIQUITY_ROOT": pair.folder(side).path,
            "CLOUDDOCUMENTS_UBIQUITY_CONTAINERS": Self.container,
            "CLOUDDOCUMENTS_DEVICE_ID": "device-\(side.rawValue)",
            "CLOUDDOCUMENTS_UBIQUITY_CONFIG": "/nonexistent/ubiquity.conf",
        ]) { $1 }
    }

    private func clouddocs(_ arguments: [String], _ pair: SyncthingPair, _ side: SyncthingPair.Side) throws -> ChildProcess {
        try ChildProcess(arguments, environment: environment(pair, side), helper: "clouddocs")
    }

    private func store(_ pair: SyncthingPair, _ side: SyncthingPair.Side, device: String? = nil) -> KeyValueStore {
        let container = UbiquityContainer(identifier: Self.container,
                                          url: pair.folder(side).appending(path: Self.container, directoryHint: .isDirectory))
        let store = KeyValueStore(folder: KeyValueStoreFolder.url(of: container), deviceIdentifier: device ?? "device-\(side.rawValue)")
        // The pair's watcher delay is 1 s (the default is 10 s): 10 s leaves the other side time
        // to fetch a conflict copy before it is removed, even on a loaded machine.
        store.conflictCopyRemovalDelay.withLock { $0 = .seconds(10) }
        return store
    }

    private func storeFolderNames(_ pair: SyncthingPair, _ side: SyncthingPair.Side) -> [String] {
        let folder = pair.folder(side).appending(path: "\(Self.container)/.clouddocuments/key-value-store")
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { !$0.hasPrefix(".") }.sorted()
    }

    @Test("a key set on A reaches B's `clouddocs kv watch`: initial sync for A's first keys, then server change")
    func keySetOnAReachesB() async throws {
        _ = try RequiredTool.syncthing.require()
        try await SyncthingPair.with { pair in
            let watch = try clouddocs(["kv", "watch"], pair, .b)
            defer { watch.closeInput(); watch.waitForExit() }
            #expect(watch.expect("watching")?.hasPrefix("watching\t") == true)

            let clock = ContinuousClock()
            let setFirst = try clouddocs(["kv", "set", "warmup", "1", "--type", "int"], pair, .a)
            setFirst.waitForExit()
            #expect(setFirst.process.terminationStatus == 0)
            #expect(watch.readLine() == "initial-sync\twarmup")

            let began = clock.now
            let set = try clouddocs(["kv", "set", "colour", "blue"], pair, .a)
            set.waitForExit()
            #expect(watch.readLine() == "server-change\tcolour")
            print("[real tools] key-value: set on A to B's notification \(clock.now - began) (Syncthing's watcher delay is 1 s)")

            let get = try clouddocs(["kv", "get", "colour"], pair, .b)
            #expect(get.readLine() == "blue")
            get.waitForExit()
            #expect(storeFolderNames(pair, .a) == ["device-a.json"])
            try await Polling.until("device-a.json on B") { storeFolderNames(pair, .b) == ["device-a.json"] }
        }
    }

    @Test("keys changed on both sides while the link is down merge key by key: the later write wins, deletions included, nothing lost")
    func conflictingKeysMerge() async throws {
        _ = try RequiredTool.syncthing.require()
        try await SyncthingPair.with { pair in
            let a = store(pair, .a), b = store(pair, .b)
            try a.set(.string("base"), forKey: "shared")
            try a.set(.string("base"), forKey: "removed-on-a")
            try a.set(.string("base"), forKey: "removed-then-set")
            try a.synchronize()
            try await Polling.until("A's keys on B", timeout: .seconds(30)) {
                try b.synchronize()
                return b.string(forKey: "removed-then-set") == "base"
            }
            try await pair.waitUntilInSync()
            try await pair.pauseLink()

            try a.set(.string("from A"), forKey: "shared")
            try a.set(.integer(1), forKey: "only-a")
            try a.removeValue(forKey: "removed-on-a")
            try a.removeValue(forKey: "removed-then-set")
            try a.synchronize()
            try b.set(.string("from B"), forKey: "shared")           // later: wins
            try b.set(.integer(2), forKey: "only-b")
            try b.set(.string("set on B"), forKey: "removed-then-set")  // later than A's removal: wins
            try b.synchronize()
            try pair.rescan(.a)
            try pair.rescan(.b)
            try await pair.resumeLink()

            let expected: [String: KeyValueStoreValue] = [
                "shared": .string("from B"), "only-a": .integer(1), "only-b": .integer(2), "removed-then-set": .string("set on B"),
            ]
            for (side, store) in [(SyncthingPair.Side.a, a), (.b, b)] {
                try await Polling.until("the merged keys on \(side.rawValue)", timeout: .seconds(30)) {
                    try store.synchronize()
                    return store.dictionaryRepresentation == expected
                }
            }
            try await pair.waitUntilInSync()
            // One file per device: the sync tool never saw a conflict.
            for side in SyncthingPair.Side.allCases {
                #expect(storeFolderNames(pair, side) == ["device-a.json", "device-b.json"])
            }
        }
    }

    @Test("two machines with the same device identifier: Syncthing's conflict copy of the device file is merged and removed on both")
    func realConflictCopyOfADeviceFile() async throws {
        _ = try RequiredTool.syncthing.require()
        try await SyncthingPair.with { pair in
            let a = store(pair, .a, device: "same"), b = store(pair, .b, device: "same")
            try a.set(.string("base"), forKey: "base")
            try a.synchronize()
            try await Polling.until("A's file on B", timeout: .seconds(30)) {
                try b.synchronize()
                return b.string(forKey: "base") == "base"
            }
            try await pair.waitUntilInSync()
            try await pair.pauseLink()
            try a.set(.string("A"), forKey: "from-a")
            try a.synchronize()
            try b.set(.string("B"), forKey: "from-b")
            try b.synchronize()
            try pair.rescan(.a)
            try pair.rescan(.b)
            let watching = (ChangeRecorder(a), ChangeRecorder(b))   // watch the folders: copies are merged as they appear
            try await pair.resumeLink()

            let expected: [String: KeyValueStoreValue] = ["base": .string("base"), "from-a": .string("A"), "from-b": .string("B")]
            // Known, intermittent: when a store rewrites the shared device file (merging the copy)
            // while Syncthing is about to update it, Syncthing says "file modified but not
            // rescanned" and stops syncing the folder for a minute, sometimes more than once; the
            // two sides then converge minutes later. Seen in 1 full run out of 8 on a loaded machine.
            await withKnownIssue("Syncthing backs off a minute when a store rewrites a file it is updating", isIntermittent: true) {
                try await Polling.until("both keys on both sides, no conflict copy left", timeout: .seconds(90), interval: .milliseconds(100)) {
                    for (side, store) in [(SyncthingPair.Side.a, a), (.b, b)] {
                        try store.synchronize()
                        guard store.dictionaryRepresentation == expected, storeFolderNames(pair, side) == ["same.json"] else { return false }
                    }
                    return true
                }
                try await pair.waitUntilInSync()
                for side in SyncthingPair.Side.allCases { #expect(storeFolderNames(pair, side) == ["same.json"]) }
                // Syncthing did make a conflict copy, and a store merged it.
                #expect(a.disk.withLock { $0.conflictCopiesMerged } + b.disk.withLock { $0.conflictCopiesMerged } >= 1)
            }
            // Whatever Syncthing did meanwhile, neither side ever loses a key it wrote.
            #expect(a.string(forKey: "from-a") == "A" && a.string(forKey: "base") == "base")
            #expect(b.string(forKey: "from-b") == "B" && b.string(forKey: "base") == "base")
            _ = watching
        }
    }
}
