import CloudDocuments
import FileCoordination
import Foundation
import Testing
import TestSupport
@testable import SyncAgent

/// A package document (a folder with `index.txt`) for the engine's tests.
final class SyncedPackageNote: CloudDocument {
    var text = ""

    override func contents(forType typeName: String) throws -> DocumentContents {
        var package = FilePackage()
        try package.setFile(Data(text.utf8), named: "index.txt")
        return .package(package)
    }

    override func load(fromContents contents: DocumentContents, ofType typeName: String?) throws {
        if case .file(let data) = contents.package?["index.txt"] { text = String(decoding: data, as: UTF8.self) } else { text = "" }
    }
}

/// Open package documents and the engine: a dirty package is saved before its upload; a
/// download while the package has unsaved changes keeps them, and its save keeps the incoming
/// package as a conflict version (as for files).
@Suite("Sync engine: open package documents", .serialized)
struct EnginePackageDocumentTests {
    static let package = EnginePackageTests.package

    @Test("a dirty open package is saved before its upload; a download while B's package is dirty keeps B's edits")
    @MainActor func dirtyPackages() async throws {
        let devices = try EnginePackageTests.devices()
        try devices.write("on disk", Self.package + "/index.txt", on: devices.a)
        let onA = SyncedPackageNote(fileURL: devices.url(devices.a, Self.package))
        try await onA.openThrowing()
        onA.text = "A typed, not saved"
        onA.updateChangeCount(.done)
        await devices.sync(devices.a)
        // The upload's coordinated read of the package made the document save first.
        #expect(devices.store.data(at: Self.package + "/index.txt") == Data("A typed, not saved".utf8))
        #expect(!onA.hasUnsavedChanges)
        await devices.sync(devices.b)
        #expect(devices.read(Self.package + "/index.txt", on: devices.b) == "A typed, not saved")

        let onB = SyncedPackageNote(fileURL: devices.url(devices.b, Self.package))
        try await onB.openThrowing()
        onB.text = "B typed this"
        onB.updateChangeCount(.done)
        onA.text = "A wrote this"
        try await onA.saveThrowing(to: onA.fileURL, for: .forOverwriting)
        await devices.sync(devices.a)
        await devices.sync(devices.b)
        // The new package is in place; B's document is still open with its unsaved edit.
        #expect(devices.read(Self.package + "/index.txt", on: devices.b) == "A wrote this")
        #expect(!onB.documentState.contains(.closed))
        #expect(onB.hasUnsavedChanges)
        #expect(onB.text == "B typed this")
        // Its save keeps the downloaded package as a conflict version; the next passes carry B's
        // text to the server and to A.
        try await onB.saveThrowing(to: onB.fileURL, for: .forOverwriting)
        let versions = try FileVersion.unresolvedConflictVersionsOfItem(at: devices.url(devices.b, Self.package))
        #expect(try versions.map { try String(contentsOf: $0.url.appending(path: "index.txt"), encoding: .utf8) } == ["A wrote this"])
        await devices.sync(devices.b)
        await devices.sync(devices.a)
        #expect(devices.read(Self.package + "/index.txt", on: devices.a) == "B typed this")
        try await onA.closeThrowing()
        try await onB.closeThrowing()
    }
}
