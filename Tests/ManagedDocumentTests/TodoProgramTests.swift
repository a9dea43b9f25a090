import Foundation
import Testing
import TestSupport

/// The `todo` example as two devices run it: real processes, one container folder between them
/// (as a sync tool that has caught up leaves it).
@Suite struct TodoProgramTests {
    static func todo(_ device: String, _ arguments: [String], scratch: Scratch) throws -> ToolRun {
        try runExampleTool("todo", ["--document", scratch.path + "/\(device)/Todos.mdoc", "--container", scratch.path + "/container",
                                    "--device", device] + arguments, in: scratch.url)
    }

    @Test func helpPrintsTheUsageAndSucceeds() throws {
        let scratch = try Scratch("todo-help")
        defer { scratch.remove() }
        let help = try runExampleTool("todo", ["--help"], in: scratch.url)
        #expect(help.status == 0 && help.output.hasPrefix("usage: todo"), "\(help.output) \(help.errors)")
        let bad = try runExampleTool("todo", ["--nonsense", "x", "list"], in: scratch.url)
        #expect(bad.status == 2 && bad.errors.contains("unknown option"))
    }

    @Test func twoDevicesAddCompleteListAndWatch() throws {
        let scratch = try Scratch("todo-program")
        defer { scratch.remove() }
        let added = try Self.todo("laptop", ["add", "Buy", "milk"], scratch: scratch)
        #expect(added.status == 0, "\(added.errors)")
        let id = try #require(added.output.split(separator: " ").dropFirst().first.map(String.init))

        let listed = try Self.todo("phone", ["list"], scratch: scratch)
        #expect(listed.output == "[ ] \(id)  Buy milk\n", "\(listed.errors)")
        let done = try Self.todo("phone", ["done", String(id.prefix(4))], scratch: scratch)
        #expect(done.status == 0, "\(done.errors)")
        #expect(try Self.todo("laptop", ["list"], scratch: scratch).output == "[x] \(id)  Buy milk\n")
        #expect(try Self.todo("laptop", ["done", "zzzz"], scratch: scratch).status == 1)
        #expect(try Self.todo("laptop", ["frobnicate"], scratch: scratch).status == 2)

        // `watch` on the phone hears the laptop's next task.
        let watcher = try ChildProcess(executable: exampleToolURL("todo"),
                                       ["--document", scratch.path + "/phone/Todos.mdoc", "--container", scratch.path + "/container",
                                        "--device", "phone", "watch"])
        defer { watcher.kill9() }
        #expect(watcher.expect("watching") == "watching")
        #expect(try Self.todo("laptop", ["add", "Bake bread"], scratch: scratch).status == 0)
        let heard = watcher.expect("+ ")
        #expect(heard?.hasSuffix("Bake bread") == true, "\(heard ?? "nothing")")
    }
}
