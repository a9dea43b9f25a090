import Foundation
import Glibc
import SystemSupport

/// A separate process running `CoordinationTestHelper`, driven line by line through pipes.
/// Shared by every test target (the one copy of the pipe reader).
public final class ChildProcess: @unchecked Sendable {
    // @unchecked: used from the one test that created it.
    public let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private lazy var lines = LineReader(descriptor: output.fileHandleForReading.fileDescriptor)

    public static var helperURL: URL { builtProductURL("CoordinationTestHelper") }

    /// The built worker executable `name` (`CoordinationTestHelper`, `UbiquityTestHelper`).
    public static func helperURL(named name: String) -> URL { builtProductURL(name) }

    /// The built executable `name` (a helper or an example program): in the build folder, beside
    /// the test bundle.
    public static func builtProductURL(_ name: String) -> URL {
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

    /// Starts `helper` (default `CoordinationTestHelper`) with `arguments`; see
    /// ``init(executable:_:environment:standardError:)``.
    public convenience init(_ arguments: [String], environment: [String: String]? = nil, helper: String = "CoordinationTestHelper",
                            standardError: URL? = nil) throws {
        try self.init(executable: Self.builtProductURL(helper), arguments, environment: environment, standardError: standardError)
    }

    /// Runs `executable` (see ``builtProductURL(_:)``) with `arguments`, driven through pipes.
    /// Its standard error goes to the file `standardError` (created or emptied) when given, else
    /// to this process's.
    public init(executable: URL, _ arguments: [String], environment: [String: String]? = nil, standardError: URL? = nil) throws {
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.standardInput = input
        process.standardOutput = output
        if let standardError {
            guard FileManager.default.createFile(atPath: standardError.path, contents: nil) else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: standardError.path])
            }
            let handle = try FileHandle(forWritingTo: standardError)
            defer { try? handle.close() }
            process.standardError = handle
            try process.run()
        } else {
            try process.run()
        }
    }

    /// The next line the child prints (blocks until it arrives; fails after 60 s of silence, times
    /// ``Polling/deadlineScale``).
    public func readLine() -> String? {
        lines.readLine(timeoutMilliseconds: Int32(60_000 * Polling.deadlineScale))
    }

    /// Reads lines until one starts with `prefix`; returns it.
    public func expect(_ prefix: String) -> String? {
        while let line = readLine() {
            if line.hasPrefix(prefix) { return line }
            if line.hasPrefix("ERROR") { return line }
        }
        return nil
    }

    public func send(_ line: String = "go") {
        input.fileHandleForWriting.write(Data((line + "\n").utf8))
    }

    public func closeInput() {
        try? input.fileHandleForWriting.close()
    }

    public func kill9() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    public func waitForExit() {
        process.waitUntilExit()
    }
}

extension ChildProcess {
    /// Stops the child with `SIGSTOP` and returns once the kernel reports it stopped (`waitid`
    /// with `WSTOPPED | WNOWAIT`, so its exit can still be waited for); false if either failed.
    public func stopAndWaitUntilStopped() -> Bool {
        let pid = process.processIdentifier
        guard kill(pid, SIGSTOP) == 0 else { return false }
        var info = siginfo_t()
        return waitid(P_PID, id_t(pid), &info, WSTOPPED | WNOWAIT) == 0
    }
}
