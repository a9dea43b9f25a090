import Foundation
import Ubiquity

// Workers for the key-value store's cross-process tests (Tests/UbiquityTests/KeyValue*Tests).
// Every command takes the store folder and a device identifier first, and speaks in lines.

let keyValueWorkerCommands: [String: WorkerCommand] = [
    "kv-write": keyValueWrite,
    "kv-sync-loop": keyValueSyncLoop,
    "kv-watch": keyValueWatch,
]

private func keyValueStore(_ arguments: [String]) throws -> KeyValueStore {
    guard arguments.count >= 2 else { throw KeyValueWorkerUsage(message: "needs <folder> <device>") }
    return KeyValueStore(folder: URL(fileURLWithPath: arguments[0]), deviceIdentifier: arguments[1])
}

private struct KeyValueWorkerUsage: Error { let message: String }

/// `kv-write FOLDER DEVICE NAME COUNT SHARED`: prints `ready`, waits for a line, then sets
/// `NAME-0` … `NAME-(COUNT-1)` to their index and `shared-0` … `shared-(SHARED-1)` to NAME,
/// interleaved, synchronizing after every write; prints `done`, waits for a line, synchronizes once
/// more (picking up the other writers) and prints every key as `KEY=VALUE`, then `end`.
@MainActor private func keyValueWrite(_ arguments: [String]) async throws {
    let store = try keyValueStore(arguments)
    guard arguments.count == 5, let count = Int(arguments[3]), let shared = Int(arguments[4]) else {
        throw KeyValueWorkerUsage(message: "kv-write FOLDER DEVICE NAME COUNT SHARED")
    }
    let name = arguments[2]
    say("ready")
    _ = readLine()
    for index in 0..<max(count, shared) {
        if index < count { try store.set(.integer(Int64(index)), forKey: "\(name)-\(index)") }
        if index < shared { try store.set(.string(name), forKey: "shared-\(index)") }
        try store.synchronize()
    }
    say("done")
    _ = readLine()
    try store.synchronize()
    for (key, value) in store.dictionaryRepresentation.sorted(by: { $0.key < $1.key }) {
        say("\(key)=\(describe(value))")
    }
    say("end")
}

/// `kv-sync-loop FOLDER DEVICE`: forever sets `k-N` to N plus 2 KB of filler and synchronizes,
/// printing `synced N` after each; the test kills it with SIGKILL at a random moment.
@MainActor private func keyValueSyncLoop(_ arguments: [String]) async throws {
    let store = try keyValueStore(arguments)
    let filler = String(repeating: "x", count: 2048)
    var index = 0
    while true {
        try store.set(.string("\(index) \(filler)"), forKey: "k-\(index)")
        try store.synchronize()
        say("synced \(index)")
        index += 1
    }
}

/// `kv-watch FOLDER DEVICE`: prints `ready` once watching, then `change REASON KEY,KEY…` for each
/// change, until standard input ends.
@MainActor private func keyValueWatch(_ arguments: [String]) async throws {
    let store = try keyValueStore(arguments)
    let observation = store.addChangeObserver { change in
        say("change \(change.reason) \(change.changedKeys.joined(separator: ","))")
    }
    say("ready")
    while readLine() != nil {}
    observation.cancel()
}

private func describe(_ value: KeyValueStoreValue) -> String {
    switch value {
    case .string(let text): text
    case .integer(let number): String(number)
    default: "\(value)"
    }
}
