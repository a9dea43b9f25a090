import Foundation

/// What one run of an example program left behind.
public struct ToolRun: Sendable {
    public let status: Int32
    public let output: String
    public let errors: String
}

/// Runs the example executable `name` (`text-editor`, `image-tool`, `clouddocs`, built next to the tests) with
/// `arguments` in `folder`, and waits for it. Standard output and error go to files in a private
/// folder (no pipe to drain, so no deadlock however much it prints); standard input is empty.
/// `environment` entries are added to this process's environment.
public func runExampleTool(_ name: String, _ arguments: [String], in folder: URL,
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
public func exampleToolURL(_ name: String) -> URL {
    ChildProcess.helperURL(named: name)
}
