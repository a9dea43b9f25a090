import Foundation
import Testing
import TestSupport

/// The `todo` example on two devices whose containers two real, linked Syncthing instances keep
/// in sync (SyncthingPair): the documents stay local, the change logs travel.
@Suite("Real Syncthing: the todo list between two devices", .serialized, .timeLimit(.minutes(3 * Polling.deadlineScale)),
       .enabled(if: RequiredTool.syncthing.isInstalledOrRequired, Comment(rawValue: RequiredTool.syncthing.missingMessage)))
struct TodoSyncthingTests {
    static func arguments(_ pair: SyncthingPair, _ side: SyncthingPair.Side, _ command: [String]) -> [String] {
        ["--document", pair.workURL.path + "/local-\(side.rawValue)/Todos.mdoc", "--container", pair.folder(side).path,
         "--device", "device-\(side.rawValue)"] + command
    }

    static func todo(_ pair: SyncthingPair, _ side: SyncthingPair.Side, _ command: [String]) throws -> ToolRun {
        try runExampleTool("todo", arguments(pair, side, command), in: pair.workURL)
    }

    @Test func aTaskAddedOnOneDeviceIsWatchedAndCompletedOnTheOther() async throws {
        _ = try RequiredTool.syncthing.require()
        try await SyncthingPair.with { pair in
            let watch = try ChildProcess(executable: exampleToolURL("todo"), Self.arguments(pair, .b, ["watch"]))
            defer { watch.kill9() }
            #expect(watch.expect("watching") == "watching")

            let added = try Self.todo(pair, .a, ["add", "Buy", "milk"])
            #expect(added.status == 0, "\(added.errors)")
            let id = try #require(added.output.split(separator: " ").dropFirst().first.map(String.init))
            let heard = try await offCooperativePool { watch.expect("+ ") }
            #expect(heard == "+ [ ] \(id)  Buy milk")

            let done = try Self.todo(pair, .b, ["done", id])
            #expect(done.status == 0, "\(done.errors)")
            try await Polling.until("device a lists the task as done") {
                try Self.todo(pair, .a, ["list"]).output == "[x] \(id)  Buy milk\n"
            }
        }
    }
}
