import Foundation
import Glibc
import Testing

/// A separate process running `CoordinationTestHelper save-and-wait`, which starts a save and
/// stops in the middle of it until told to go on. Driven through pipes; never by sleeping.
final class SaveWorker: @unchecked Sendable {
    // @unchecked: used only by the one test that created it.
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private var buffer: [UInt8] = []

    private static var helperURL: URL {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent(),
        ]
        for directory in candidates {
            let url = directory.appendingPathComponent("CoordinationTestHelper")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return candidates[0].appendingPathComponent("CoordinationTestHelper")
    }

    /// Starts a worker saving 2 MiB (`package`: a package of two 1 MiB files) to `url`, and
    /// returns once it is in the middle of writing its temporary item (it said "WRITING").
    init(saving kind: String, to url: URL) throws {
        process.executableURL = Self.helperURL
        process.arguments = ["save-and-wait", kind, url.path]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        let line = readLine()
        #expect(line == "WRITING", "the worker should be writing, said \(line ?? "nothing")")
    }

    /// The next line the worker prints (nil after 60 s of silence or at its end).
    func readLine() -> String? {
        let fd = output.fileHandleForReading.fileDescriptor
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeFirst(newline + 1)
                return line
            }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 60_000) > 0 else { return nil }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = Glibc.read(fd, &chunk, chunk.count)
            guard count > 0 else { return nil }
            buffer += chunk[..<count]
        }
    }

    /// Lets the worker finish its save; returns what it printed then ("SAVED" on success).
    func finish() -> String? {
        input.fileHandleForWriting.write(Data("go\n".utf8))
        let line = readLine()
        process.waitUntilExit()
        return line
    }

    /// `kill -9` in the middle of the save, and waits until the process is gone.
    func kill9() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
