import Foundation
import Testing
import TestSupport
@testable import ManagedDocuments

/// The issue's hardest promise, with real processes: three devices (ManagedDocumentTestHelper
/// processes, each with its own store and its own copy of the container) make random concurrent
/// inserts, updates and deletes; the test plays the sync tool, delivering each device's logs to
/// the others in random orders, duplicated and late; and it `kill -9`s devices at random moments
/// — while starting (opening, importing), importing, editing or saving — and restarts them. In
/// the end every store is identical (the dumps, clocks included), equal to what a newcomer builds
/// from the logs alone, and every change a device acknowledged (its save returned) is in its
/// logs and in every store.
///
/// Seeded (`seed`): the same edits, deliveries and kill points on every run; only where in a
/// phase a kill lands varies with the machine's timing, which is what is tested. No sleeps: the
/// test waits for the lines each helper prints.
@Suite(.serialized) struct KilledDevicesConvergeTests {
    static let seed: UInt64 = 0x6B11_1ED_2026
    static let rounds = 16

    /// Where the test kills a device in a round.
    enum KillPoint: CaseIterable { case none, startup, importing, editing, saving }

    /// One device: its document, its container, its process (nil while dead), what it acknowledged.
    final class Device {
        let name: String
        let document: String
        let container: URL
        /// The standard error of the latest process.
        var errorLog: URL
        var child: ChildProcess?
        /// The records each acknowledged round inserted.
        var acknowledged: [UUID] = []
        /// Files of other devices copied here already (by device/name).
        var delivered: Set<String> = []
        var kills = 0

        init(name: String, scratch: Scratch) {
            self.name = name
            document = scratch.path + "/\(name)/Items.mdoc"
            container = scratch.url.appending(path: "\(name)-container")
            errorLog = scratch.url.appending(path: "\(name)-stderr.txt")
        }

        var ownFolder: URL { Self.folder(of: name, in: container) }

        static func folder(of device: String, in container: URL) -> URL {
            container.appending(path: "ManagedDocuments/Items/\(device)")
        }

        var standardError: String { (try? String(contentsOf: errorLog, encoding: .utf8)) ?? "" }

        /// Starts the process; waits for "ready" unless killing it at once (a kill while it opens).
        func start(killAtOnce: Bool) throws {
            errorLog = container.deletingLastPathComponent().appending(path: "\(name)-stderr-\(kills).txt")
            let child = try ChildProcess(executable: ChildProcess.helperURL(named: "ManagedDocumentTestHelper"),
                                         ["device", document, container.path, name, String(KilledDevicesConvergeTests.seed)],
                                         standardError: errorLog)
            if killAtOnce {
                child.kill9()
                kills += 1
                return
            }
            let ready = child.expect("ready")
            try #require(ready == "ready", "device \(name) did not start: \(ready ?? "no output")\n\(standardError)")
            self.child = child
        }

        /// Runs round `round`, killing the process at `killPoint` (after the line that begins
        /// that phase: the kill lands somewhere inside it).
        func run(round: Int, killPoint: KillPoint) throws {
            if killPoint == .startup {
                child?.kill9()  // one process per store, as on a real device
                child = nil
                try start(killAtOnce: true)
            }
            if child == nil { try start(killAtOnce: false) }
            guard let child else { return }
            child.send("round \(round)")
            let line: String
            switch killPoint {
            case .importing: line = "importing"
            case .editing: line = "editing"
            case .saving: line = "saving"
            case .none, .startup: line = "saved \(round)"
            }
            let reached = child.expect(line)
            try #require(reached?.hasPrefix(line) == true, "device \(name), round \(round): \(reached ?? "no output")\n\(standardError)")
            if line.hasPrefix("saved"), let reached {
                let ids = reached.split(separator: " ").dropFirst(2).first.map { $0.split(separator: ",") } ?? []
                acknowledged += ids.compactMap { UUID(uuidString: String($0)) }
            } else {
                child.kill9()
                kills += 1
                self.child = nil
            }
        }

        func command(_ command: String, expecting answer: String) throws {
            if child == nil { try start(killAtOnce: false) }
            guard let child else { return }
            child.send(command)
            let line = child.expect(answer)
            try #require(line == answer, "device \(name), \(command): \(line ?? "no output")\n\(standardError)")
        }
    }

    /// Copies `source`'s published files into `target`'s container as a sync tool would (a
    /// temporary name, then a rename): each undelivered file with probability ½ (else later),
    /// each delivered one again with probability 1/10 (a duplicate); everything when `all`.
    static func deliver(from source: Device, to target: URL, delivered: inout Set<String>,
                        random: inout SplitMix64, all: Bool) throws {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: source.ownFolder.path)) ?? [])
            .filter { !$0.hasPrefix(".") && ($0.hasSuffix(".mdlog") || $0.hasSuffix(".mdbase")) }
            .sorted().shuffled(using: &random)
        let destination = Device.folder(of: source.name, in: target)
        try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: true)
        for name in names {
            let key = source.name + "/" + name
            let roll = Int.random(in: 0..<10, using: &random)
            guard all || (delivered.contains(key) ? roll == 0 : roll < 5) else { continue }
            let temporary = destination.appending(path: ".\(name).sync-tmp")
            try? FileManager.default.removeItem(at: temporary)
            try FileManager.default.copyItem(at: source.ownFolder.appending(path: name), to: temporary)
            guard rename(temporary.path, destination.appending(path: name).path) == 0 else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: temporary.path])
            }
            delivered.insert(key)
        }
    }

    @Test func killedDevicesConvergeWithNoAcknowledgedChangeLost() async throws {
        try await offCooperativePool { try Self.killAndConverge() }
    }

    private static func killAndConverge() throws {
        let scratch = try Scratch("managed-killed-devices")
        defer { scratch.remove() }
        var random = SplitMix64(seed: seed)
        let devices = ["a", "b", "c"].map { Device(name: $0, scratch: scratch) }
        defer { for device in devices { device.child?.kill9() } }

        for round in 1...rounds {
            for device in devices.shuffled(using: &random) {
                let roll = Int.random(in: 0..<100, using: &random)
                let killPoint: KillPoint = switch roll {
                case 0..<55: .none
                case 55..<63: .startup
                case 63..<75: .importing
                case 75..<85: .editing
                default: .saving
                }
                try device.run(round: round, killPoint: killPoint)
            }
            for source in devices {
                for target in devices where target !== source {
                    try deliver(from: source, to: target.container, delivered: &target.delivered, random: &random, all: false)
                }
            }
        }

        // Everything delivered late, then every device imports it and closes.
        for source in devices {
            for target in devices where target !== source {
                try deliver(from: source, to: target.container, delivered: &target.delivered, random: &random, all: true)
            }
        }
        for device in devices {
            try device.command("sync", expecting: "synced")
            try device.command("quit", expecting: "closed")
            device.child?.waitForExit()
            #expect(device.child?.process.terminationStatus == 0, "device \(device.name): \(device.standardError)")
            device.child = nil
        }
        #expect(devices.map(\.kills).reduce(0, +) >= 5, "the seed should kill devices: \(devices.map(\.kills))")

        // Every store is whole and identical, and equal to a newcomer's built from the logs alone.
        var dumps: [String] = []
        for device in devices {
            let store = try CrashConsistencyTests.synchronizer(
                ManagedDocument.persistentStoreURL(inPackage: URL(fileURLWithPath: device.document)).path,
                container: device.container, device: device.name)
            #expect(try CrashConsistencyTests.integrity(store) == [[.text("ok")]])
            dumps.append(try CrashConsistencyTests.dump(store))
        }
        #expect(dumps[0] == dumps[1], "a and b differ")
        #expect(dumps[1] == dumps[2], "b and c differ")
        let union = scratch.url.appending(path: "union-container")
        var unionDelivered: Set<String> = []
        for device in devices {
            try deliver(from: device, to: union, delivered: &unionDelivered, random: &random, all: true)
        }
        let newcomer = try CrashConsistencyTests.synchronizer(scratch.path + "/newcomer.sqlite", container: union, device: "z")
        let outcome = newcomer.importChanges()
        #expect(outcome.failures.isEmpty, "\(outcome.failures)")
        #expect(try CrashConsistencyTests.dump(newcomer) == dumps[0])

        // No acknowledged change lost: each is in its device's logs and in every store.
        for device in devices {
            var logged: Set<UUID> = []
            for name in (try? FileManager.default.contentsOfDirectory(atPath: device.ownFolder.path)) ?? []
            where !name.hasPrefix(".") {
                let bytes = try [UInt8](Data(contentsOf: device.ownFolder.appending(path: name)))
                logged.formUnion(try ChangeLogFile.decode(bytes).changes.map(\.id))
            }
            let missing = device.acknowledged.filter { !logged.contains($0) || !dumps[0].contains("Item/\($0.uuidString) ") }
            #expect(!device.acknowledged.isEmpty)
            #expect(missing.isEmpty, "device \(device.name) lost acknowledged inserts \(missing)")
        }
    }
}
