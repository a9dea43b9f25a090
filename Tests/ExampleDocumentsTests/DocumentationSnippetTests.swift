import Foundation
import TestSupport
import Testing

/// Every fenced `swift` block of README.md and Docs/*.md compiles against the package's modules
/// as built for this test run (Swift 6 mode), so the documentation cannot rot. How a block is
/// compiled is said by a marker comment before it — see ``DocumentationSnippets``.
@Suite("Documentation: every Swift block compiles")
struct DocumentationSnippetTests {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static let documents = ["README.md", "Docs/Architecture.md", "Docs/Coordination.md", "Docs/Documents.md", "Docs/FoundationCompatibility.md",
                            "Docs/FilesOnDemand.md", "Docs/GettingStarted.md", "Docs/KeyValueStore.md", "Docs/ManagedDocument.md", "Docs/MetadataQuery.md",
                            "Docs/Performance.md", "Docs/RemotePresenters.md", "Docs/SyncAgent.md", "Docs/Ubiquity.md", "Docs/Versions.md"]

    /// The compiler of the toolchain that runs these tests (always installed with it).
    static let swiftc = RequiredTool(command: "swiftc", debianPackage: "swiftlang",
                                     purpose: "the documentation tests")

    @Test("the list of documents names every Markdown file in Docs/")
    func everyDocumentIsListed() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.packageRoot.appendingPathComponent("Docs").path)
            .filter { $0.hasSuffix(".md") }.map { "Docs/" + $0 }
        #expect(Set(names).subtracting(Self.documents).isEmpty, "add the new document to DocumentationSnippetTests.documents")
    }

    @Test("the Swift blocks of the document compile", arguments: documents)
    func blocksCompile(_ document: String) throws {
        let compiler = try Self.swiftc.require()
        let markdown = try String(contentsOf: Self.packageRoot.appendingPathComponent(document), encoding: .utf8)
        let snippets = try DocumentationSnippets(markdown: markdown)
        let scratch = try Scratch("snippets")
        defer { scratch.remove() }
        let folder = scratch.url

        let library = snippets.moduleSources()
        if library.contains(where: { !$0.name.hasPrefix("context") }) {
            let files = try library.map { source in
                let url = folder.appendingPathComponent(source.name)
                try Data(source.code.utf8).write(to: url)
                return url.path
            }
            let run = try Self.typecheck(files, compiler: compiler, extra: ["-parse-as-library", "-module-name", "Snippets"])
            #expect(run.status == 0, "\(document): \(Self.located(run.errors, in: library, folder: folder))")
        }
        for manifest in snippets.blocks where manifest.kind == .manifest {
            let url = folder.appendingPathComponent("Package\(manifest.line).swift")
            try Data(manifest.manifestSource.utf8).write(to: url)
            let run = try Self.typecheck([url.path], compiler: compiler,
                                         extra: ["-I", Self.manifestAPI(compiler: compiler).path, "-package-description-version", "6.0"])
            #expect(run.status == 0, "\(document), the manifest at line \(manifest.line):\n\(run.errors)")
        }
        for program in snippets.blocks where program.kind == .program {
            let programFolder = folder.appendingPathComponent("program\(program.line)", isDirectory: true)
            try FileManager.default.createDirectory(at: programFolder, withIntermediateDirectories: true)
            let main = programFolder.appendingPathComponent("main.swift")
            try Data(program.code.utf8).write(to: main)
            let run = try Self.typecheck([main.path], compiler: compiler, extra: [])
            #expect(run.status == 0, "\(document), the program at line \(program.line):\n\(run.errors)")
        }
    }

    /// The toolchain's PackageDescription module, for `manifest` blocks.
    private static func manifestAPI(compiler: URL) -> URL {
        compiler.resolvingSymlinksInPath().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("lib/swift/pm/ManifestAPI", isDirectory: true)
    }

    /// `swiftc -typecheck` of `files` against the modules built beside this test bundle.
    private static func typecheck(_ files: [String], compiler: URL, extra: [String]) throws -> (status: Int32, errors: String) {
        let process = Process()
        process.executableURL = compiler
        process.arguments = ["-typecheck", "-swift-version", "6", "-I", modulesFolder.path,
                             "-I", packageRoot.appendingPathComponent("Examples/CZlib").path,
                             "-I", packageRoot.appendingPathComponent("Sources/CSQLite").path,
                             "-I", packageRoot.appendingPathComponent("Sources/CSystemShim/include").path] + extra + files
        let errors = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Read to the end before waiting: the compiler may print more than a pipe holds.
        let text = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: text, as: UTF8.self))
    }

    /// The build's `Modules` folder: beside the test bundle (or one level up).
    private static var modulesFolder: URL {
        let bundle = ChildProcess.builtProductURL("text-editor").deletingLastPathComponent()
        return bundle.appendingPathComponent("Modules", isDirectory: true)
    }

    /// The compiler's messages with each generated file named by the block's line in the document.
    private static func located(_ errors: String, in sources: [(name: String, code: String)], folder: URL) -> String {
        var text = errors.replacingOccurrences(of: folder.path + "/", with: "")
        for source in sources where source.name.hasPrefix("line") {
            let line = source.name.dropFirst(4).dropLast(6)
            text = text.replacingOccurrences(of: source.name, with: "[the block at line \(line)]")
        }
        return "\n" + text
    }
}
