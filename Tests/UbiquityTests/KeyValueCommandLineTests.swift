import Foundation
import Testing
import TestSupport
@testable import Ubiquity

@Suite("clouddocs kv", .serialized)
struct KeyValueCommandLineTests {
    private struct Run { var status: Int32; var output: String; var errors: String }

    /// Runs `clouddocs` with the store of `root` as device `device`, standard input empty.
    private func clouddocs(_ arguments: [String], root: URL, device: String = "cli") throws -> Run {
        let process = Process()
        process.executableURL = ChildProcess.helperURL(named: "clouddocs")
        process.arguments = arguments
        process.environment = environment(root: root, device: device)
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let out = output.fileHandleForReading.readDataToEndOfFile(), err = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, output: String(decoding: out, as: UTF8.self),
                   errors: String(decoding: err, as: UTF8.self))
    }

    private func environment(root: URL, device: String) -> [String: String] {
        ProcessInfo.processInfo.environment.merging([
            "CLOUDDOCUMENTS_UBIQUITY_ROOT": root.path, "CLOUDDOCUMENTS_UBIQUITY_CONTAINERS": "com.example.cli",
            "CLOUDDOCUMENTS_DEVICE_ID": device, "CLOUDDOCUMENTS_UBIQUITY_CONFIG": "/nonexistent/ubiquity.conf",
        ]) { $1 }
    }

    @Test("set with every --type, get, list, remove; errors exit 1 and usage errors 2")
    func setGetListRemove() throws {
        let rootScratch = try Scratch("kv-cli")
        defer { rootScratch.remove() }
        let root = rootScratch.url
        for (key, value, type) in [("s", "hello world", "string"), ("i", "-42", "int"), ("d", "2.5", "double"),
                                   ("b", "yes", "bool"), ("bytes", "AAEC", "data-base64"), ("j", #"{"a":[1,"x",false]}"#, "json")] {
            let run = try clouddocs(["kv", "set", key, value, "--type", type], root: root)
            #expect(run.status == 0, "\(key): \(run.errors)")
        }
        #expect(try clouddocs(["kv", "get", "s"], root: root).output == "hello world\n")
        #expect(try clouddocs(["kv", "get", "i"], root: root).output == "-42\n")
        #expect(try clouddocs(["kv", "get", "b"], root: root).output == "true\n")
        #expect(try clouddocs(["kv", "get", "j"], root: root).output == #"{"a":[1,"x",false]}"# + "\n")
        #expect(try clouddocs(["kv", "list"], root: root).output == """
            b\tbool\ttrue
            bytes\tdata\tAAEC
            d\tdouble\t2.5
            i\tinteger\t-42
            j\tdictionary\t{"a":[1,"x",false]}
            s\tstring\thello world

            """)
        #expect(try clouddocs(["kv", "remove", "s"], root: root).status == 0)
        let missing = try clouddocs(["kv", "get", "s"], root: root)
        #expect(missing.status == 1 && missing.errors.contains("no value"))
        #expect(try clouddocs(["kv", "set", "i", "x", "--type", "int"], root: root).status == 2)
        #expect(try clouddocs(["kv", "set", "i", "1", "--type", "colour"], root: root).status == 2)
        #expect(try clouddocs(["kv", "frobnicate"], root: root).status == 2)
        let tooLong = try clouddocs(["kv", "set", String(repeating: "k", count: 65), "v"], root: root)
        #expect(tooLong.status == 1 && tooLong.errors.contains("over the limit of 64"))
        // Another device reads what this one wrote.
        #expect(try clouddocs(["kv", "get", "d"], root: root, device: "other").output == "2.5\n")
    }

    @Test("watch prints each change by another process as one line, and ends after --changes N or at end of input")
    func watch() throws {
        let rootScratch = try Scratch("kv-cli")
        defer { rootScratch.remove() }
        let root = rootScratch.url
        let watcher = try ChildProcess(["kv", "watch", "--changes", "2"], environment: environment(root: root, device: "watcher"),
                                       helper: "clouddocs")
        #expect(watcher.expect("watching")?.hasPrefix("watching\t" + root.path) == true)
        #expect(try clouddocs(["kv", "set", "colour", "blue"], root: root, device: "writer").status == 0)
        #expect(watcher.readLine() == "initial-sync\tcolour")
        #expect(try clouddocs(["kv", "remove", "colour"], root: root, device: "writer").status == 0)
        #expect(watcher.readLine() == "server-change\tcolour")
        watcher.waitForExit()
        #expect(watcher.process.terminationStatus == 0)

        let untilEOF = try ChildProcess(["kv", "watch"], environment: environment(root: root, device: "watcher"), helper: "clouddocs")
        #expect(untilEOF.expect("watching") != nil)
        untilEOF.closeInput()
        untilEOF.waitForExit()
        #expect(untilEOF.process.terminationStatus == 0)
    }
}
