// A child process for the ManagedDocument crash tests: it saves or imports, saying on standard
// output where it is, so the test can kill it (-9) in the middle.
//
//   ManagedDocumentTestHelper save-loop DOCUMENT CONTAINER DEVICE COUNT   insert + save COUNT times ("saved N" after each)
//   ManagedDocumentTestHelper import DOCUMENT CONTAINER DEVICE            open, then "importing", import, "imported N"
//   ManagedDocumentTestHelper device DOCUMENT CONTAINER DEVICE SEED       one "device", driven line by line (below)
//
// A device prints "ready" once its document is open, then reads commands from standard input:
//
//   round K   "importing", imports, "editing", makes seeded random inserts, updates and deletes
//             (the same for the same SEED, DEVICE, K and store), "saving", saves, then
//             "saved K ID,ID,…" (the records it inserted: acknowledged once this line is out)
//   sync      imports, then "synced"
//   quit      closes the document, "closed", exits 0
import FoundationCompatibility
import Foundation
import ManagedDocuments

/// SplitMix64 (TestSupport's, which this executable does not link): seeded, reproducible.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

func say(_ line: String) {
    print(line)
    fflush(nil)
}

/// The next line of standard input, read off the main actor (which the document's saves and
/// imports use meanwhile); `nil` at its end.
func nextCommand() async -> String? {
    await Task.detached { readLine() }.value
}

/// One round of random edits: inserts, updates and deletes of items, and singleton settings.
/// - Returns: the identifiers of the items inserted.
@MainActor func edit(_ context: ManagedObjectContext, device: String, round: Int, random: inout SeededRandom) throws -> [ManagedObjectID] {
    var inserted: [ManagedObjectID] = []
    for index in 0..<Int.random(in: 3...12, using: &random) {
        inserted.append(try context.insert("Item", ["title": .string("\(device) round \(round) item \(index)"),
                                                    "count": .integer(Int64(index))]))
    }
    let live = try context.fetch(FetchRequest(entityName: "Item")).map(\.objectID)
    for _ in 0..<(live.isEmpty ? 0 : Int.random(in: 0...5, using: &random)) {
        let id = live[Int.random(in: 0..<live.count, using: &random)]
        let roll = Int.random(in: 0..<100, using: &random)
        let values: [String: AttributeValue] = roll % 2 == 0
            ? ["title": .string("edited by \(device) in round \(round)")]
            : ["count": .integer(Int64(roll)), "done": .bool(true), "note": .string("n\(roll)")]
        do throws(ManagedStoreError) {
            if roll < 60 { try context.update(id, values) } else { try context.delete(id) }
        } catch {
            // Deleted earlier in this round: nothing to do.
            guard case .recordNotFound = error else { throw error }
        }
    }
    if Int.random(in: 0..<3, using: &random) == 0 {
        let key = Int.random(in: 0..<3, using: &random)
        try context.insert("Setting", ["key": .string("theme-\(key)"), "value": .integer(Int64(round))])
    }
    return inserted
}

@MainActor func runDevice(_ document: ManagedDocument, device: String, seed: UInt64) async throws -> Int32 {
    try await document.openOrCreate()
    say("ready")
    while let command = await nextCommand() {
        let words = command.split(separator: " ")
        switch words.first {
        case "round":
            let round = words.count > 1 ? Int(words[1]) ?? 0 : 0
            say("importing")
            await document.importChanges()
            say("editing")
            var random = SeededRandom(state: seed ^ UInt64(truncatingIfNeeded: device.utf8.reduce(0) { $0 &* 31 &+ Int($1) }) ^ UInt64(round) << 32)
            let inserted = try edit(document.managedObjectContext, device: device, round: round, random: &random)
            say("saving")
            try await document.saveThrowing(to: document.fileURL, for: .forOverwriting)
            say("saved \(round) " + inserted.map(\.uuid.uuidString).joined(separator: ","))
        case "sync":
            await document.importChanges()
            say("synced")
        case "quit":
            try await document.closeThrowing()
            say("closed")
            return 0
        default:
            say("ERROR unknown command \(command)")
        }
    }
    return 0
}

@MainActor func run(_ arguments: [String]) async throws -> Int32 {
    guard arguments.count >= 4 else {
        FileHandle.standardError.write(Data("usage: ManagedDocumentTestHelper save-loop|import|device DOCUMENT CONTAINER DEVICE [COUNT|SEED]\n".utf8))
        return 2
    }
    let document = ManagedDocument(fileURL: URL(fileURLWithPath: arguments[1]), managedObjectModel: HelperSchema.items)
    document.persistentStoreOptions = [NSPersistentStoreUbiquitousContentNameKey: "Items",
                                       NSPersistentStoreUbiquitousContentURLKey: URL(fileURLWithPath: arguments[2]),
                                       ManagedDocumentDeviceIdentifierKey: arguments[3]]
    document.importInterval = nil
    document.autosaveInterval = nil
    switch arguments[0] {
    case "save-loop":
        try await document.openOrCreate()
        for index in 0..<(Int(arguments.count > 4 ? arguments[4] : "100") ?? 100) {
            for item in 0..<20 { try document.managedObjectContext.insert("Item", ["title": .string("save \(index) item \(item)")]) }
            try await document.saveThrowing(to: document.fileURL, for: .forOverwriting)
            say("saved \(index)")
        }
    case "import":
        try await document.openOrCreate()
        say("importing")
        let summary = await document.importChanges()
        say("imported \(summary.inserted.count)")
    case "device":
        return try await runDevice(document, device: arguments[3], seed: UInt64(arguments.count > 4 ? arguments[4] : "0") ?? 0)
    default:
        return 2
    }
    try await document.closeThrowing()
    return 0
}

do { exit(try await run(Array(CommandLine.arguments.dropFirst()))) } catch {
    FileHandle.standardError.write(Data("ManagedDocumentTestHelper: \(error)\n".utf8))
    exit(1)
}
