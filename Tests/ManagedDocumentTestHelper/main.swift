// A child process for the ManagedDocument crash tests: it saves or imports, saying on standard
// output where it is, so the test can kill it (-9) in the middle.
//
//   ManagedDocumentTestHelper save-loop DOCUMENT CONTAINER DEVICE COUNT   insert + save COUNT times ("saved N" after each)
//   ManagedDocumentTestHelper import DOCUMENT CONTAINER DEVICE            open, then "importing", import, "imported N"
import Foundation
import ManagedDocuments

let schema = ManagedSchema(version: 1, entities: [
    EntityDescription("Item", attributes: [
        AttributeDescription("title", .string, optional: false, default: ""),
        AttributeDescription("count", .integer, optional: false, default: 0),
        AttributeDescription("done", .bool, optional: false, default: false),
        AttributeDescription("note", .string),
    ]),
    EntityDescription("Setting", attributes: [
        AttributeDescription("key", .string, optional: false, unique: true),
        AttributeDescription("value", .integer),
    ]),
])

@MainActor func run(_ arguments: [String]) async throws -> Int32 {
    guard arguments.count >= 4 else {
        FileHandle.standardError.write(Data("usage: ManagedDocumentTestHelper save-loop|import DOCUMENT CONTAINER DEVICE [COUNT]\n".utf8))
        return 2
    }
    let document = ManagedDocument(fileURL: URL(fileURLWithPath: arguments[1]), managedObjectModel: schema)
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
            print("saved \(index)")
            fflush(nil)
        }
    case "import":
        try await document.openOrCreate()
        print("importing")
        fflush(nil)
        let summary = await document.importChanges()
        print("imported \(summary.inserted.count)")
        fflush(nil)
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
