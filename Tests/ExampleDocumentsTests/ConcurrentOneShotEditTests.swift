import Foundation
import TestSupport
import Testing
@testable import ExampleDocuments

/// Programs that make one edit and exit, run many times at once on one file (issue 15): each run
/// reads, changes and writes the file inside one coordinated write, so every edit is applied,
/// one after another, and none becomes a conflict version.
@Suite("one-shot edits from concurrent processes")
struct ConcurrentOneShotEditTests {
    @Test("text-editor: 2 appenders × 40 and a replacer × 15 at once keep every line once, in order, with no conflict")
    func textEditorLoops() async throws {
        try Scratch.with { folder in
            let store = folder.appendingPathComponent("versions", isDirectory: true)
            let documents = folder.appendingPathComponent("documents", isDirectory: true)
            try FileManager.default.createDirectory(at: documents, withIntermediateDirectories: true)
            let file = documents.appendingPathComponent("log.txt")
            try Data("header\n".utf8).write(to: file)
            let environment = ["CLOUDDOCUMENTS_VERSION_STORE": store.path]

            // The newline inside the quotes is a real one: each run adds one line.
            let loops = try [
                ToolLoop("text-editor", count: 40, command: "\"$T\" append log.txt \"A$i\n\"", in: documents, environment: environment),
                ToolLoop("text-editor", count: 40, command: "\"$T\" append log.txt \"B$i\n\"", in: documents, environment: environment),
                ToolLoop("text-editor", count: 15, command: "\"$T\" replace log.txt \"A1\n\" \"a1\n\"", in: documents, environment: environment),
            ]
            let results = loops.map { $0.finish() }
            for result in results {
                #expect(result.status == 0, "\(result.errors)")
            }

            let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n").map(String.init)
            #expect(lines.first == "header")
            #expect(lines.count == 81, "header + 80 appended lines, got \(lines.count)")
            // "A1" may have been replaced by "a1" (when a replace ran after it was appended).
            let ownA = lines.filter { $0.hasPrefix("A") || $0 == "a1" }.map { $0 == "a1" ? "A1" : $0 }
            #expect(ownA == (1...40).map { "A\($0)" }, "every line of A once, in order")
            #expect(lines.filter { $0.hasPrefix("B") } == (1...40).map { "B\($0)" }, "every line of B once, in order")

            // What each run said agrees with the file.
            #expect(results[0].output.split(separator: "\n").count == 40, "\(results[0].output)")
            #expect(results[1].output.split(separator: "\n").allSatisfy { $0.hasPrefix("Appended ") && $0.hasSuffix(" bytes to log.txt") })
            let replaced = results[2].output.split(separator: "\n").map { line -> Int in
                line == "Replaced 1 occurrence in log.txt" ? 1 : line == "Replaced 0 occurrences in log.txt" ? 0 : -100
            }
            #expect(replaced.count == 15, "\(results[2].output)")
            #expect(replaced.reduce(0, +) == (lines.contains("a1") ? 1 : 0), "\(results[2].output)")

            let conflicts = try runExampleTool("text-editor", ["conflicts", "log.txt"], in: documents, environment: environment)
            #expect(conflicts.status == 0, "\(conflicts.errors)")
            #expect(conflicts.output == "No unresolved conflicts in log.txt.\n")
            #expect(try FileManager.default.contentsOfDirectory(atPath: documents.path) == ["log.txt"], "no temporary file left")
        }
    }

    @Test("image-tool: invert × 4 and rotate 90 × 3 at once apply all 7 edits, with no conflict")
    func imageToolLoops() async throws {
        try Scratch.with { folder in
            let store = folder.appendingPathComponent("versions", isDirectory: true)
            let documents = folder.appendingPathComponent("documents", isDirectory: true)
            try FileManager.default.createDirectory(at: documents, withIntermediateDirectories: true)
            let file = documents.appendingPathComponent("picture.png")
            let original = Self.testImage(width: 5, height: 3)
            try ImageCodec.encode(original, as: .png).write(to: file)
            let environment = ["CLOUDDOCUMENTS_VERSION_STORE": store.path]

            let loops = try [
                ToolLoop("image-tool", count: 4, command: "\"$T\" invert picture.png", in: documents, environment: environment),
                ToolLoop("image-tool", count: 3, command: "\"$T\" rotate picture.png 90", in: documents, environment: environment),
            ]
            let results = loops.map { $0.finish() }
            for result in results {
                #expect(result.status == 0, "\(result.errors)")
            }
            let saved = results.flatMap { $0.output.split(separator: "\n") }.filter { $0.hasPrefix("Saved \(file.path): ") }
            #expect(saved.count == 7, "\(results.map(\.output))")

            let final = try ImageCodec.decode(Data(contentsOf: file))
            let expected = Self.edited(original, inversions: 4, clockwiseQuarterTurns: 3)
            #expect(final.width == 3 && final.height == 5, "\(final.width) × \(final.height)")
            #expect(final == expected, "the result of all 4 inversions and 3 rotations, in any order")

            let conflicts = try runExampleTool("image-tool", ["conflicts", "picture.png"], in: documents, environment: environment)
            #expect(conflicts.status == 0, "\(conflicts.errors)")
            #expect(conflicts.output == "No unresolved conflicts in picture.png.\n")
            #expect(try FileManager.default.contentsOfDirectory(atPath: documents.path) == ["picture.png"], "no temporary file left")
        }
    }

    @Test("append and replace keep a byte-order mark and CRLF line endings, byte for byte")
    func textFormatKept() async throws {
        try Scratch.with { folder in
            let file = folder.appendingPathComponent("crlf.txt")
            try Data([0xEF, 0xBB, 0xBF] + Array("one\r\ntwo\r\n".utf8)).write(to: file)
            let append = try runExampleTool("text-editor", ["append", "crlf.txt", "three\r\n"], in: folder)
            #expect(append.status == 0, "\(append.errors)")
            #expect(append.output == "Appended 7 bytes to crlf.txt\n")
            let replace = try runExampleTool("text-editor", ["replace", "crlf.txt", "two", "2"], in: folder)
            #expect(replace.status == 0, "\(replace.errors)")
            #expect(replace.output == "Replaced 1 occurrence in crlf.txt\n")
            #expect(try Data(contentsOf: file) == Data([0xEF, 0xBB, 0xBF] + Array("one\r\n2\r\nthree\r\n".utf8)))

            let before = try FileManager.default.attributesOfItem(atPath: file.path)[.systemFileNumber] as? Int
            let none = try runExampleTool("text-editor", ["replace", "crlf.txt", "absent", "x"], in: folder)
            #expect(none.output == "Replaced 0 occurrences in crlf.txt\n")
            let after = try FileManager.default.attributesOfItem(atPath: file.path)[.systemFileNumber] as? Int
            #expect(before == after, "nothing to change: the file is not rewritten")
        }
    }

    @Test("a one-shot append makes a document open in another process save its unsaved edit first, then adds to it")
    @MainActor
    func openDocumentSavesFirst() async throws {
        try await Scratch.with { folder in
            let file = folder.appendingPathComponent("notes.txt")
            try Data("header\n".utf8).write(to: file)
            let document = TextDocument(fileURL: file)
            try await document.openThrowing()
            document.append("mine\n")  // unsaved

            // Off the main actor: the document saves on it when the tool's write asks it to.
            let run = try await Task.detached {
                try runExampleTool("text-editor", ["append", "notes.txt", "theirs\n"], in: folder)
            }.value
            #expect(run.status == 0, "\(run.errors)")
            #expect(try String(contentsOf: file, encoding: .utf8) == "header\nmine\ntheirs\n")
            #expect(!document.hasUnsavedChanges)
            try await document.closeThrowing()
        }
    }

    /// A `width` × `height` image whose pixels all differ, some of them translucent.
    private static func testImage(width: Int, height: Int) -> RGBAImage {
        var pixels: [UInt8] = []
        for y in 0..<height {
            for x in 0..<width {
                pixels += [UInt8(x * 40 + 7), UInt8(y * 70 + 3), UInt8((x + y) * 20), UInt8(255 - x * 10)]
            }
        }
        return RGBAImage(uncheckedWidth: width, height: height, pixels: pixels)
    }

    /// `image` with its colours (not alpha) inverted `inversions` times and turned clockwise by
    /// 90° `clockwiseQuarterTurns` times, computed pixel by pixel here (not with the tool's
    /// operations).
    private static func edited(_ image: RGBAImage, inversions: Int, clockwiseQuarterTurns: Int) -> RGBAImage {
        var (width, height, pixels) = (image.width, image.height, image.pixels)
        if inversions % 2 == 1 {
            for index in pixels.indices where index % 4 != 3 { pixels[index] = 255 - pixels[index] }
        }
        for _ in 0..<(clockwiseQuarterTurns % 4) {
            // One clockwise turn: the new image is `height` wide; its pixel (x, y) is the old
            // pixel (y, height - 1 - x).
            var turned = [UInt8](repeating: 0, count: pixels.count)
            for y in 0..<width {
                for x in 0..<height {
                    let source = ((height - 1 - x) * width + y) * 4
                    let target = (y * height + x) * 4
                    turned[target..<(target + 4)] = pixels[source..<(source + 4)]
                }
            }
            (width, height, pixels) = (height, width, turned)
        }
        return RGBAImage(uncheckedWidth: width, height: height, pixels: pixels)
    }
}
