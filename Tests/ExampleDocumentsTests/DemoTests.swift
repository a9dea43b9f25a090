import Foundation
import TestSupport
import Testing

/// `swift run clouddocs-demo`, run as a user would (its second process included), in a private
/// temporary folder with a private version store.
@Suite("clouddocs-demo")
struct DemoTests {
    /// The lines of step `number` of the demo's output (from its heading to the next one).
    private func step(_ number: Int, of output: String) -> [Substring] {
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { $0.hasPrefix("\(number). ") }) else { return [] }
        let end = lines[(start + 1)...].firstIndex(where: { $0.first?.isNumber == true }) ?? lines.endIndex
        return Array(lines[start..<end])
    }

    @Test("runs every step; plain text when not on a terminal; a read saves the other process's unsaved edit; two processes' edits are merged, then conflict, and the conflict is shown and resolved; the document moves to the cloud and another process's live query sees it")
    func demoRuns() throws {
        let folder = try Scratch("clouddocs-demo-test")
        defer { folder.remove() }
        let scratch = folder.url
        let store = scratch.appendingPathComponent("versions")
        let run = try runExampleTool("clouddocs-demo", [], in: scratch,
                                     environment: ["TMPDIR": scratch.path, "CLOUDDOCUMENTS_VERSION_STORE": store.path])
        #expect(run.status == 0, "output:\n\(run.output)\nerrors:\n\(run.errors)")
        // No save request waited out its limit (10 s), and no wait cycle had to be broken.
        #expect(!run.errors.contains("did not answer a save request") && !run.errors.contains("wait cycle"))
        #expect(!run.output.contains("The demo failed"))
        #expect(!run.output.contains("gave up waiting") && !run.output.contains("did not follow the move"))
        #expect(run.output.contains("\nDone."))
        // Standard output is a pipe here, not a terminal: no colour escapes for the picture.
        #expect(!run.output.contains("\u{1B}"))

        // 5: the second process's unsaved edit is saved because this process read the file.
        let read = step(5, of: run.output)
        #expect(read.contains { $0.contains("[second process] changed “- bread⏎” to “- rye bread⏎” (1×), not saved yet") })
        #expect(read.contains { $0.contains("on disk, read without coordinating: “") && !$0.contains("rye bread") })
        #expect(read.contains { $0.contains("a coordinated read here: “") && $0.contains("- rye bread⏎") })
        #expect(read.contains { $0.contains("[second process] already saved (asked by the first process's read)") })
        #expect(read.contains { $0.contains("this process's document reloaded by itself: “") && $0.contains("- rye bread⏎") })

        // 6: different lines edited by both processes: merged, no conflict.
        let merged = step(6, of: run.output)
        #expect(merged.contains { $0.contains("[second process] changed “Shopping list⏎” to “Shopping list for Saturday⏎”") })
        #expect(merged.contains { $0.contains("TextDocument merged them") })
        #expect(merged.contains { $0.contains("on disk: “Shopping list for Saturday⏎") && $0.contains("- eggs⏎”; no conflict") })
        #expect(!merged.contains { $0.contains("inConflict") })

        // 7: the same line edited by both: a conflict, shown with both texts.
        let conflict = step(7, of: run.output)
        #expect(conflict.contains { $0.contains("[second process] changed “- milk⏎” to “- whole milk⏎”") })
        #expect(conflict.contains { $0.contains("notification: notes is now [inConflict") })
        #expect(conflict.contains { $0.contains("  state [inConflict") })
        #expect(conflict.contains { $0.contains("current version: “") && $0.contains("- oat milk⏎") && $0.contains("saved at ") })
        #expect(conflict.contains { $0.contains("conflict version 1: “") && $0.contains("- whole milk⏎") && $0.contains("saved on ") })
        #expect(!conflict.contains { $0.contains("conflict version 2") })

        // 8: resolved by picking the second process's version; .inConflict clears.
        let resolved = step(8, of: run.output)
        #expect(resolved.contains { $0.contains("took conflict version 1's text and saved it") })
        #expect(resolved.contains { $0.contains("resolved and removed 1 conflict version") })
        #expect(resolved.contains { $0.hasSuffix("state normal; unresolved conflict versions left: 0") })
        #expect(resolved.contains { $0.contains("on disk: “") && $0.contains("- whole milk⏎") && !$0.contains("oat milk") })

        // 9: moved into a ubiquity container; the open document follows; another process's live
        // query sees it arrive.
        let cloud = step(9, of: run.output)
        #expect(cloud.contains { $0.contains("[second process] live query of the container's documents started") })
        #expect(cloud.contains { $0.contains("the open document followed: its fileURL is now …/com.example.clouddocs-demo/Documents/notes.txt") })
        #expect(cloud.contains { $0.contains("isUbiquitousItem: true") })
        #expect(cloud.contains { $0.contains("[second process] appeared in my live query: notes.txt") })

        #expect(step(10, of: run.output).contains { $0.contains("notes.txt closed (saved in the cloud container)") })
    }
}
