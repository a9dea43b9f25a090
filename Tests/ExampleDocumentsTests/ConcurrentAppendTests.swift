import Foundation
import TestSupport
import Testing

/// Two programs appending to one text file at once keep every line (issue 8: "2 processes × 40
/// appends keeps all 80 lines"): each run reads, appends and writes inside one coordinated write
/// (issue 15; `ConcurrentOneShotEditTests` adds a replacer and image-tool).
@Suite("text-editor append from two processes at once")
struct ConcurrentAppendTests {
    @Test("2 processes × 40 appends keep all 80 lines, in each process's order, with no conflict version")
    func twoProcessesKeepEveryLine() throws {
        let scratch = try Scratch("concurrent-append")
        defer { scratch.remove() }
        let folder = scratch.url
        let store = folder.appendingPathComponent("versions", isDirectory: true)
        let file = folder.appendingPathComponent("log.txt")
        try Data("header\n".utf8).write(to: file)

        // Each writer is a shell loop of 40 separate `text-editor append` runs; both loops start
        // together and run to the end (no sleeps: the interleaving is whatever the machine makes).
        let tool = exampleToolURL("text-editor").path
        let writers = try ["A", "B"].map { name -> Process in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "i=1; while [ $i -le 40 ]; do \"$0\" append \"$1\" \"$2$i\n\" >/dev/null || exit 1; i=$((i+1)); done",
                                 tool, file.path, name]
            process.environment = ProcessInfo.processInfo.environment.merging(
                ["CLOUDDOCUMENTS_VERSION_STORE": store.path]) { $1 }
            process.standardInput = FileHandle.nullDevice
            try process.run()
            return process
        }
        for writer in writers {
            writer.waitUntilExit()
            #expect(writer.terminationStatus == 0)
        }

        let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(lines.first == "header")
        for name in ["A", "B"] {
            let own = lines.filter { $0.hasPrefix(name) }
            #expect(own == (1...40).map { "\(name)\($0)" }, "every line of \(name), in order")
        }
        #expect(lines.count == 81, "header + 80 appended lines, got \(lines.count)")
        let leftovers = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        #expect(leftovers.filter { $0.hasPrefix(".log.txt.cdsave-") }.isEmpty)
    }
}
