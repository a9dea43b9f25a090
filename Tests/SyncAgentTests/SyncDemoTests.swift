import Foundation
import Glibc
import Testing
import TestSupport

/// `swift run sync-demo`, run as a user would: its own Apache, two `clouddocsd` processes (built
/// next to it), `clouddocs` for the statuses, in a private temporary folder.
@Suite("sync-demo")
struct SyncDemoTests {
    /// The lines of step `number` of the demo's output (from its heading to the next one).
    private func step(_ number: Int, of output: String) -> [Substring] {
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { $0.hasPrefix("\(number). ") }) else { return [] }
        let end = lines[(start + 1)...].firstIndex(where: { $0.first?.isNumber == true }) ?? lines.endIndex
        return Array(lines[start..<end])
    }

    @Test("runs every step: the edit reaches B, B keeps its unsaved edit, the conflict is on both devices and resolved on both, the agent's status is shown, and everything is stopped and removed",
          .enabled(if: RequiredTool.apache2.isInstalledOrRequired))
    func demoRuns() throws {
        _ = try RequiredTool.apache2.require()
        let folder = try Scratch("sync-demo-test")
        defer { folder.remove() }
        // As root, Apache's workers (www-data) must traverse it to the folder they serve.
        chmod(folder.url.path, 0o755)
        let run = try runExampleTool("sync-demo", [], in: folder.url, environment: ["TMPDIR": folder.url.path])
        #expect(run.status == 0, "output:\n\(run.output)\nerrors:\n\(run.errors)")
        #expect(!run.output.contains("sync-demo failed") && !run.output.contains("gave up waiting"))
        #expect(run.output.contains("\nDone: "))

        #expect(step(1, of: run.output).contains { $0.contains("Apache (pid ") && $0.contains(" serves http://127.0.0.1:") })
        #expect(step(2, of: run.output).filter { $0.contains("clouddocsd pid ") }.count == 2)

        let travels = step(3, of: run.output)
        #expect(travels.contains { $0.contains("B's notes.txt on disk: “Shopping list⏎- milk⏎- bread⏎”") })
        #expect(travels.contains { $0.contains("| uploaded: true") })
        #expect(travels.contains { $0.contains("| provider: the sync agent") })

        let conflict = step(4, of: run.output)
        #expect(conflict.contains { $0.contains("B's open document still shows “Shopping list⏎- oat milk⏎- bread⏎”, unsaved: true") })
        for device in ["B", "A"] {
            #expect(conflict.contains { $0.contains("on \(device): current “Shopping list⏎- oat milk⏎- bread⏎”") })
        }
        #expect(conflict.filter { $0.contains("| 1 unresolved conflict version of notes.txt:") }.count == 2)
        #expect(conflict.filter { $0.contains("“Shopping list⏎- whole milk⏎- bread⏎”") && $0.contains("|   1  ") }.count == 2)
        #expect(conflict.contains { $0.contains("A: Kept the current notes.txt; resolved and removed 1 conflict.") })
        #expect(conflict.contains { $0.contains("B: no unresolved conflicts of notes.txt left") })

        let status = step(5, of: run.output)
        #expect(status.contains { $0.contains("| agent: running") })
        #expect(status.contains { $0.contains("| com.example.notes: ") })

        // 6: everything the demo started is stopped and its folder removed.
        #expect(step(6, of: run.output).contains { $0.contains("stopped what the demo started; removed ") })
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.url.path).filter { $0.hasPrefix("sync-demo-") }
        #expect(left.isEmpty, "left behind: \(left)")
    }
}
