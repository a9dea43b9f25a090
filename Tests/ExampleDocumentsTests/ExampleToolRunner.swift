import Foundation
import Testing

/// What one run of an example program left behind.
struct ToolRun {
    let status: Int32
    let output: String
    let errors: String
}

/// Runs the example executable `name` (`text-editor`, `image-tool`, built next to the tests) with
/// `arguments` in `folder`, and waits for it. Standard output and error go to files in a private
/// folder (no pipe to drain, so no deadlock however much it prints); standard input is empty.
/// `environment` entries are added to this process's environment.
func runExampleTool(_ name: String, _ arguments: [String], in folder: URL,
                    environment: [String: String] = [:]) throws -> ToolRun {
    let outputs = FileManager.default.temporaryDirectory
        .appendingPathComponent("tool-output-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: outputs, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: outputs) }
    let outURL = outputs.appendingPathComponent("stdout"), errURL = outputs.appendingPathComponent("stderr")
    _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
    _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
    let out = try FileHandle(forWritingTo: outURL), err = try FileHandle(forWritingTo: errURL)
    defer { try? out.close(); try? err.close() }

    let process = Process()
    process.executableURL = exampleToolURL(name)
    process.arguments = arguments
    process.currentDirectoryURL = folder
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = out
    process.standardError = err
    try process.run()
    process.waitUntilExit()
    return ToolRun(status: process.terminationStatus,
                   output: String(decoding: try Data(contentsOf: outURL), as: UTF8.self),
                   errors: String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
}

/// The built executable `name`: in the build folder, beside the test bundle.
func exampleToolURL(_ name: String) -> URL {
    let candidates = [
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
        Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent(),
    ]
    for directory in candidates {
        let url = directory.appendingPathComponent(name)
        if FileManager.default.isExecutableFile(atPath: url.path) { return url }
    }
    return candidates[0].appendingPathComponent(name)
}
