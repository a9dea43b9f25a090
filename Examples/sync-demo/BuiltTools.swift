import Foundation

/// The package's other programs, found next to this demo's executable (`swift build` puts them
/// all in one folder), and `clouddocs` runs.
enum BuiltTools {
    /// The folder holding this demo's executable.
    static var folder: URL {
        (Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])).deletingLastPathComponent()
    }

    /// The built program `name`, or `nil` when it was not built.
    static func find(_ name: String) -> URL? {
        let url = folder.appending(path: name)
        return FileManager.default.isExecutableFile(atPath: url.path) ? url : nil
    }

    /// Runs `clouddocs ARGUMENTS` as `device` (its environment) and returns its output, or `nil`
    /// when `clouddocs` was not built. `clouddocs status` and `agent status` (without `--watch`)
    /// print and exit.
    /// - Throws: ``DemoFailure`` when it cannot be started or exits with a failure.
    static func clouddocs(_ arguments: [String], as device: Device) throws -> String? {
        guard let executable = find("clouddocs") else { return nil }
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(device.environment) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        do { try process.run() } catch { throw DemoFailure("cannot start \(executable.path): \(error)") }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0 else {
            throw DemoFailure("clouddocs \(arguments.joined(separator: " ")) failed (\(process.terminationStatus)):\n\(text)")
        }
        return text
    }
}
