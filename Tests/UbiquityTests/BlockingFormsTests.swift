import Foundation
import Testing
import TestSupport

/// The blocking forms cannot be picked by asynchronous code (issue 16, item 12): top-level code
/// that awaits a move or a delete gets the `async` form, and the blocking forms are refused in
/// asynchronous contexts. Checked by type-checking small programs against the built modules.
@Suite("Blocking forms and asynchronous code")
struct BlockingFormsTests {
    /// `swiftc` from PATH, or nil.
    private static let swiftc: URL? = (ProcessInfo.processInfo.environment["PATH"] ?? "")
        .split(separator: ":").map { URL(fileURLWithPath: String($0)).appending(path: "swiftc") }
        .first { FileManager.default.isExecutableFile(atPath: $0.path) }

    /// Type-checks `source` as a program's main file against the modules built beside the tests.
    private func typecheck(_ source: String) throws -> (status: Int32, output: String) {
        let scratch = try Scratch("ubiquity-typecheck")
        defer { scratch.remove() }
        let folder = scratch.url
        let file = folder.appending(path: "main.swift")
        try Data(source.utf8).write(to: file)
        let modules = ChildProcess.builtProductURL("clouddocs").deletingLastPathComponent().appending(path: "Modules")
        // The package's C module (CSystemShim), which the Swift modules import.
        let shim = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appending(path: "Sources/CSystemShim/include")
        return try ToolProcess.run(try #require(Self.swiftc), ["-typecheck", "-swift-version", "6", "-I", modules.path,
                                                              "-I", shim.path, file.path])
    }

    @Test("top-level `try await account.setUbiquitous(…)` and `removeItem(at:)` are the async forms: no warning",
          .enabled(if: swiftc != nil, "swiftc is not on PATH"))
    func topLevelPicksAsync() throws {
        let result = try typecheck("""
            import Foundation
            import Ubiquity
            let account = UbiquityAccount.shared
            let url = URL(fileURLWithPath: "/tmp/a"), destination = URL(fileURLWithPath: "/tmp/b")
            try await account.setUbiquitous(true, itemAt: url, destinationURL: destination)
            try await account.removeItem(at: url)
            """)
        #expect(result.status == 0 && !result.output.contains("warning"), "\(result.output)")
    }

    @Test("the blocking forms are refused in asynchronous code, Apple's FileManager.setUbiquitous included",
          .enabled(if: swiftc != nil, "swiftc is not on PATH"))
    func blockingFormsRefused() throws {
        let result = try typecheck("""
            import Foundation
            import Ubiquity
            import FoundationCompatibility
            func work(_ account: UbiquityAccount, _ url: URL, _ destination: URL) async throws {
                try account.setUbiquitousBlocking(true, itemAt: url, destinationURL: destination)
                try account.removeItemBlocking(at: url)
            }
            func apple(_ url: URL, _ destination: URL) async throws {
                try FileManager.default.setUbiquitous(true, itemAt: url, destinationURL: destination)
            }
            """)
        #expect(result.status != 0)
        #expect(result.output.contains("'setUbiquitousBlocking' is unavailable from asynchronous contexts"), "\(result.output)")
        #expect(result.output.contains("'removeItemBlocking' is unavailable from asynchronous contexts"), "\(result.output)")
        // With the async overload there, the compiler offers it (`await`) rather than block.
        #expect(result.output.contains("main.swift:9:5: error: expression is 'async' but is not marked with 'await'"), "\(result.output)")

        let synchronous = try typecheck("""
            import Foundation
            import Ubiquity
            import FoundationCompatibility
            func onAQueue(_ account: UbiquityAccount, _ url: URL, _ destination: URL) throws {
                try account.setUbiquitousBlocking(true, itemAt: url, destinationURL: destination)
                try FileManager.default.setUbiquitous(true, itemAt: url, destinationURL: destination)
                try account.removeItemBlocking(at: url)
            }
            """)
        #expect(synchronous.status == 0 && !synchronous.output.contains("warning"), "\(synchronous.output)")
    }
}
