import Foundation
import Testing
import TestSupport
@testable import Ubiquity

// Real Syncthing (SyncthingPair, Tests/TestSupport): two linked instances on 127.0.0.1, each
// syncing one "device"'s ubiquity root. Serialized: each test runs a pair of its own.

@Suite("Real Syncthing: the key-value store between two devices", .serialized, .timeLimit(.minutes(3 * Polling.deadlineScale)),
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

            let setFirst = try clouddocs(["kv", "set", "warmup", "1", "--type", "int"], pair, .a)
            setFirst.waitForExit()
            #expect(setFirst.process.terminationStatus == 0)
            #expect(watch.readLine() == "initial-sync\twarmup")

            let set = try clouddocs(["kv", "set", "colour", "blue"], pair, .a)
            set.waitForExit()
            #expect(watch.readLine() == "server-change\tcolour")

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
            // Waits until the two sides have settled — the same keys on both, no conflict copy left,
            // Syncthing connected, idle and in sync on both — and then checks what they settled on,
            // so that a lost key fails at once, by name. A store may rewrite the shared device file
            // (merging the copy) while Syncthing is updating it: Syncthing's pull then fails ("file
            // modified but not rescanned") and would wait a minute or more before it tries again;
            // the wait restarts such a side's folder instead (`SyncthingPair.retryFailedPulls`).
            var settled: [[String: KeyValueStoreValue]] = []
            try await Polling.until("both sides to settle: the same keys, no conflict copy left, Syncthing idle and in sync",
                                    timeout: .seconds(150), interval: .milliseconds(200), details: {
                [(SyncthingPair.Side.a, a), (.b, b)].map { side, store in
                    "\(side.rawValue): keys \(store.dictionaryRepresentation.keys.sorted()), files \(storeFolderNames(pair, side))"
                }.joined(separator: "\n") + "\n" + pair.logTails()
            }) {
                var views: [[String: KeyValueStoreValue]] = []
                for (side, store) in [(SyncthingPair.Side.a, a), (.b, b)] {
                    try store.synchronize()
                    guard storeFolderNames(pair, side) == ["same.json"] else { try await pair.retryFailedPulls(); return false }
                    views.append(store.dictionaryRepresentation)
                }
                guard views[0] == views[1], try pair.isConnected(.a), try pair.isConnected(.b),
                      try pair.isIdleAndComplete(.a), try pair.isIdleAndComplete(.b) else {
                    try await pair.retryFailedPulls()
                    return false
                }
                settled = views
                return true
            }
            for side in SyncthingPair.Side.allCases { #expect(storeFolderNames(pair, side) == ["same.json"]) }
            // Syncthing did make a conflict copy, and a store merged it.
            #expect(a.disk.withLock { $0.conflictCopiesMerged } + b.disk.withLock { $0.conflictCopiesMerged } >= 1)
            // Known bug, found by this deterministic form of the test (about 1 run in 10–25): both
            // sides settle on {base, from-a} and B's own key is gone, with no copy left — a store
            // merging Syncthing's copy of the *shared* device file (two machines misconfigured with
            // one device identifier) while Syncthing replaces that file. Docs/KeyValueStore.md,
            // "Known issues". Every other key-value test holds "nothing lost" without this.
            withKnownIssue("a key written on one of two machines sharing a device identifier can be lost while Syncthing replaces the shared device file", isIntermittent: true) {
                #expect(settled.first == expected, "the sides settled without a key: \(settled.first?.keys.sorted() ?? [])")
                // Whatever Syncthing did meanwhile, neither side ever loses a key it wrote.
                #expect(a.string(forKey: "from-a") == "A" && a.string(forKey: "base") == "base")
                #expect(b.string(forKey: "from-b") == "B" && b.string(forKey: "base") == "base")
            }
            _ = watching
        }
    }
}
