import Foundation
import TestSupport
import Testing
@testable import CloudDocuments

/// A version store of one test, shared by the test process (through `VersionStore.override`) and
/// the tools it runs (through `CLOUDDOCUMENTS_VERSION_STORE`).
private struct PrivateStore {
    let root: URL
    var environment: [String: String] { ["CLOUDDOCUMENTS_VERSION_STORE": root.path] }

    func callAsFunction<T>(_ body: () throws -> T) rethrows -> T {
        try VersionStore.$override.withValue(VersionStore(root: root.path), operation: body)
    }

    /// Adds `bytes` as an unresolved conflict version of `item`, saved by `computer`.
    func addConflict(_ bytes: Data, of item: URL, from computer: String?) throws {
        let contents = root.deletingLastPathComponent().appendingPathComponent("conflict-\(UUID().uuidString)")
        try bytes.write(to: contents)
        defer { try? FileManager.default.removeItem(at: contents) }
        _ = try self {
            try FileVersion.addVersion(ofItemAt: item, withContentsOf: contents, byMoving: false, isConflict: true,
                                       savingComputer: computer, coordinator: nil)
        }
    }

    func unresolvedCount(_ item: URL) throws -> Int {
        try self { try FileVersion.unresolvedConflictVersionsOfItem(at: item).count }
    }

    func otherVersionTexts(_ item: URL) throws -> [String] {
        try self { try FileVersion.otherVersionsOfItem(at: item).map { (try? String(contentsOf: $0.url, encoding: .utf8)) ?? "?" } }
    }
}

/// Runs `body` with a folder holding `name` (with `bytes`), and a private store beside it.
@MainActor
private func withConflictedFile(_ name: String, _ bytes: Data,
                                _ body: (_ folder: URL, _ file: URL, _ store: PrivateStore) throws -> Void) async throws {
    try Scratch.with { base in
        let folder = base.appendingPathComponent("documents", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent(name)
        try bytes.write(to: file)
        try body(folder, file, PrivateStore(root: base.appendingPathComponent("store", isDirectory: true)))
    }
}

@Suite("text-editor and image-tool: conflicts and resolve")
struct ConflictCommandLineTests {
    @Test("conflicts lists number, date, saving computer, size and first differing line of each unresolved conflict")
    func listConflicts() async throws {
        try await withConflictedFile("notes.txt", Data("mine\n".utf8)) { folder, file, store in
            let none = try runExampleTool("text-editor", ["conflicts", "notes.txt"], in: folder, environment: store.environment)
            #expect(none.status == 0, "\(none.errors)")
            #expect(none.output == "No unresolved conflicts in notes.txt.\n")

            try store.addConflict(Data("from the laptop\r\nsecond\r\n".utf8), of: file, from: "laptop")
            try store.addConflict(Data("from the desktop\nmore\n".utf8), of: file, from: "desktop")
            let run = try runExampleTool("text-editor", ["conflicts", "notes.txt"], in: folder, environment: store.environment)
            #expect(run.status == 0, "\(run.errors)")
            let lines = run.output.split(separator: "\n").map(String.init)
            #expect(lines.first == "2 unresolved conflict versions of notes.txt:")
            #expect(lines.count == 3, "\(run.output)")
            #expect(lines.dropFirst().first?.hasPrefix("  1  ") == true)
            #expect(lines.dropFirst().first?.hasSuffix("  laptop  25 bytes, line 1: “from the laptop”") == true, "\(run.output)")
            #expect(lines.last?.hasPrefix("  2  ") == true)
            #expect(lines.last?.hasSuffix("  desktop  22 bytes, line 1: “from the desktop”") == true, "\(run.output)")
            // The date is ISO 8601 (UTC).
            let isoDate = try Regex(#"  2  \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ  "#)
            #expect(lines.last?.contains(isoDate) == true, "\(run.output)")
        }
    }

    @Test("conflicts shows where versions that share their first line differ, and leaves out an unknown computer")
    func listConflictsSharingTheirFirstLine() async throws {
        try await withConflictedFile("notes.txt", Data("Shopping list\n- bread\n".utf8)) { folder, file, store in
            try store.addConflict(Data("Shopping list\n- bread\n- milk\n".utf8), of: file, from: nil)
            try store.addConflict(Data("Shopping list\n- butter\n".utf8), of: file, from: "desktop")
            try store.addConflict(Data("Shopping list\n".utf8), of: file, from: "laptop")
            try store.addConflict(Data("Shopping list\n- bread\n".utf8), of: file, from: "tablet")
            let run = try runExampleTool("text-editor", ["conflicts", "notes.txt"], in: folder, environment: store.environment)
            #expect(run.status == 0, "\(run.errors)")
            let lines = run.output.split(separator: "\n").map(String.init)
            #expect(lines.count == 5, "\(run.output)")
            #expect(lines.dropFirst(1).first?.hasSuffix("Z  29 bytes, line 3: “- milk”") == true, "\(run.output)")
            #expect(lines.dropFirst(2).first?.hasSuffix("  desktop  23 bytes, line 2: “- butter”") == true, "\(run.output)")
            #expect(lines.dropFirst(3).first?.hasSuffix("  laptop  14 bytes, line 2: (ends here)") == true, "\(run.output)")
            #expect(lines.dropFirst(4).first?.hasSuffix("  tablet  22 bytes, same text as the current file") == true, "\(run.output)")
            #expect(!run.output.contains("unknown computer"))
        }
    }

    @Test("resolve --keep current leaves the file, resolves and removes the conflicts, keeps earlier versions")
    func keepCurrent() async throws {
        try await withConflictedFile("notes.txt", Data("mine\n".utf8)) { folder, file, store in
            let earlier = folder.appendingPathComponent("earlier")
            try Data("an earlier version\n".utf8).write(to: earlier)
            _ = try store { try FileVersion.addOfItem(at: file, withContentsOf: earlier) }
            try store.addConflict(Data("theirs\n".utf8), of: file, from: "laptop")
            try store.addConflict(Data("other\n".utf8), of: file, from: "desktop")

            let run = try runExampleTool("text-editor", ["resolve", "notes.txt", "--keep", "current"], in: folder,
                                         environment: store.environment)
            #expect(run.status == 0, "\(run.errors)")
            #expect(run.output == "Kept the current notes.txt; resolved and removed 2 conflicts.\n")
            #expect(try Data(contentsOf: file) == Data("mine\n".utf8))
            #expect(try store.unresolvedCount(file) == 0)
            #expect(try store.otherVersionTexts(file) == ["an earlier version\n"])

            let again = try runExampleTool("text-editor", ["resolve", "notes.txt", "--keep", "current"], in: folder,
                                           environment: store.environment)
            #expect(again.status == 0, "\(again.errors)")
            #expect(again.output == "No unresolved conflicts in notes.txt.\n")
        }
    }

    @Test("resolve --keep N replaces the file with conflict version N byte for byte, then resolves all")
    func keepVersion() async throws {
        try await withConflictedFile("notes.txt", Data("mine\n".utf8)) { folder, file, store in
            try store.addConflict(Data("first\n".utf8), of: file, from: "laptop")
            try store.addConflict(Data("second\r\nwith CRLF\r\n".utf8), of: file, from: "desktop")
            let run = try runExampleTool("text-editor", ["resolve", "notes.txt", "--keep", "2"], in: folder,
                                         environment: store.environment)
            #expect(run.status == 0, "\(run.errors)")
            #expect(run.output == "Replaced notes.txt with conflict version 2 (from desktop); resolved and removed 2 conflicts.\n")
            #expect(try Data(contentsOf: file) == Data("second\r\nwith CRLF\r\n".utf8))
            #expect(try store.unresolvedCount(file) == 0)
            #expect(try store.otherVersionTexts(file).isEmpty)
        }
    }

    @Test("resolve with a number that is not listed fails and changes nothing")
    func noSuchVersion() async throws {
        try await withConflictedFile("notes.txt", Data("mine\n".utf8)) { folder, file, store in
            try store.addConflict(Data("theirs\n".utf8), of: file, from: "laptop")
            let run = try runExampleTool("text-editor", ["resolve", "notes.txt", "--keep", "2"], in: folder,
                                         environment: store.environment)
            #expect(run.status == 1)
            #expect(run.errors.contains("has 1 unresolved conflict version; there is no version 2"), "\(run.errors)")
            #expect(try Data(contentsOf: file) == Data("mine\n".utf8))
            #expect(try store.unresolvedCount(file) == 1)
        }
    }

    @Test("resolve needs --keep current or a number from 1",
          arguments: [["resolve", "notes.txt"], ["resolve", "notes.txt", "--keep"], ["resolve", "notes.txt", "--keep", "0"],
                      ["resolve", "notes.txt", "--keep", "newest"], ["resolve", "notes.txt", "current"]])
    func usage(_ arguments: [String]) async throws {
        try await withConflictedFile("notes.txt", Data("mine\n".utf8)) { folder, file, store in
            try store.addConflict(Data("theirs\n".utf8), of: file, from: "laptop")
            let run = try runExampleTool("text-editor", arguments, in: folder, environment: store.environment)
            #expect(run.status == 2, "\(arguments)")
            #expect(run.errors.contains("--keep"), "\(run.errors)")
            #expect(try store.unresolvedCount(file) == 1)
        }
    }

    @Test("conflicts and resolve on a missing file fail with a message", arguments: [
        ["text-editor", "conflicts", "gone.txt"], ["text-editor", "resolve", "gone.txt", "--keep", "current"],
        ["image-tool", "conflicts", "gone.png"], ["image-tool", "resolve", "gone.png", "--keep", "1"],
    ])
    func missingFile(_ command: [String]) async throws {
        try await withConflictedFile("notes.txt", Data("mine\n".utf8)) { folder, _, store in
            let run = try runExampleTool(command[0], Array(command.dropFirst()), in: folder, environment: store.environment)
            #expect(run.status == 1)
            #expect(run.errors.contains("No item at"), "\(run.errors)")
            #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent(command[2]).path))
        }
    }

    @Test("image-tool lists and resolves conflicts the same way")
    func imageTool() async throws {
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        try await withConflictedFile("picture.png", Data(png + [1, 2, 3])) { folder, file, store in
            try store.addConflict(Data("P6\n1 1\n255\n\u{0}\u{0}\u{0}".utf8), of: file, from: "laptop")
            try store.addConflict(Data(png + [9, 9]), of: file, from: "desktop")
            let list = try runExampleTool("image-tool", ["conflicts", "picture.png"], in: folder, environment: store.environment)
            #expect(list.status == 0, "\(list.errors)")
            let lines = list.output.split(separator: "\n").map(String.init)
            #expect(lines.first == "2 unresolved conflict versions of picture.png:")
            #expect(lines.dropFirst().first?.hasSuffix("  laptop  PPM, 14 bytes") == true, "\(list.output)")
            #expect(lines.last?.hasSuffix("  desktop  PNG, 10 bytes") == true, "\(list.output)")

            let usage = try runExampleTool("image-tool", ["resolve", "picture.png"], in: folder, environment: store.environment)
            #expect(usage.status == 2)

            let resolve = try runExampleTool("image-tool", ["resolve", "picture.png", "--keep", "2"], in: folder,
                                             environment: store.environment)
            #expect(resolve.status == 0, "\(resolve.errors)")
            #expect(resolve.output.hasPrefix("Replaced picture.png with conflict version 2 (from desktop)"), "\(resolve.output)")
            #expect(try Data(contentsOf: file) == Data(png + [9, 9]))
            #expect(try store.unresolvedCount(file) == 0)

            let none = try runExampleTool("image-tool", ["conflicts", "picture.png"], in: folder, environment: store.environment)
            #expect(none.output == "No unresolved conflicts in picture.png.\n")
        }
    }
}
