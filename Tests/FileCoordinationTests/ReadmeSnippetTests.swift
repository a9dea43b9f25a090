import Foundation
import Testing
@testable import FileCoordination

/// The README's "Coordinating by hand" snippet, run by real separate processes: the
/// read-modify-write inside one coordinated write loses nothing. (The snippet it replaced read in
/// one coordinated call and wrote in another, and two processes running it kept 77 of 80 updates.)
@Suite("README snippets")
struct ReadmeSnippetTests {
    @Test func theReadmeReadModifyWriteKeepsEveryUpdateFromTwoProcesses() throws {
        let scratch = try Scratch()
        let file = scratch.file("notes.txt", contents: "")
        let children = try (0..<2).map { _ in try ChildProcess(["readme-append", file.path, "40"]) }
        for child in children { #expect(child.expect("READY") == "READY") }
        for child in children { child.send() }
        for child in children {
            #expect(child.expect("DONE") == "DONE")
            child.waitForExit()
        }
        let text = try Coordinator().coordinate(readingItemAt: file) { try String(contentsOf: $0, encoding: .utf8) }
        #expect(text == String(repeating: "!", count: 80))
    }
}
