// A separate process for the ubiquity cross-process tests. Each command prints what happens as
// single lines on stdout and is sequenced by the parent test through stdin lines (never by
// sleeping). Commands live in one file per area (`QueryWorkerCommands`, …), each a table of
// name → function; the first argument picks one.
import Foundation
import Ubiquity

/// Unbuffered, whole lines: the parent reads them through a pipe as they come.
func say(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    bytes.withUnsafeBytes { _ = write(1, $0.baseAddress, $0.count) }
}

typealias WorkerCommand = @MainActor ([String]) async throws -> Void

let commands: [String: WorkerCommand] = containerWorkerCommands
    .merging(queryWorkerCommands) { first, _ in first }
    .merging(keyValueWorkerCommands) { first, _ in first }
    .merging(moveWorkerCommands) { first, _ in first }
    .merging(onDemandWorkerCommands) { first, _ in first }

// A process using Ubiquity: its change monitor knows the sync tools' names (as an app's does).
SyncToolRules.registerWithCoordination()
let arguments = Array(CommandLine.arguments.dropFirst())
guard let name = arguments.first, let command = commands[name] else {
    say("usage: UbiquityTestHelper <\(commands.keys.sorted().joined(separator: "|"))> …")
    exit(2)
}
do {
    try await command(Array(arguments.dropFirst()))
    exit(0)
} catch {
    say("ERROR \(error)")
    exit(1)
}
