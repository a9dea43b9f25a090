import Foundation
import Testing
@testable import CloudDocuments

/// Runs `body` with a fresh folder for documents and a fresh version store inside it (through
/// `VersionStore.override`, so tests running in parallel never share a store).
func withVersionStore<Result>(limits: VersionStore.Limits = .init(),
                              _ body: (_ folder: URL, _ store: VersionStore) throws -> Result) throws -> Result {
    try Scratch.with { folder in
        let documents = folder.appendingPathComponent("documents", isDirectory: true)
        try FileManager.default.createDirectory(at: documents, withIntermediateDirectories: true)
        let store = VersionStore(root: folder.appendingPathComponent("store").path, limits: limits)
        return try VersionStore.$override.withValue(store) { try body(documents, store) }
    }
}

/// Adds `text` as a version of `item`, through a contents file beside the store.
@discardableResult
func addVersion(_ text: String, of item: URL, conflict: Bool = false) throws -> FileVersion {
    let contents = item.deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("contents-\(UUID().uuidString)")
    try put(text, at: contents)
    defer { try? FileManager.default.removeItem(at: contents) }
    if conflict {
        return try FileVersion.addVersion(ofItemAt: item, withContentsOf: contents, byMoving: false,
                                          isConflict: true, savingComputer: "other-laptop", coordinator: nil)
    }
    return try FileVersion.addOfItem(at: item, withContentsOf: contents)
}

/// The texts of the other versions of `item`, oldest first.
func versionTexts(of item: URL) throws -> [String?] {
    try FileVersion.otherVersionsOfItem(at: item).map { text(at: $0.url) }
}
