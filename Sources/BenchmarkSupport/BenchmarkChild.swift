import Foundation
import Glibc
import SystemSupport

/// A copy of the running benchmark started as a child process (`--child ARGUMENTS…`), driven
/// through pipes: lines in on standard input, lines out on standard output. Shared by the
/// benchmarks that measure across processes.
public final class BenchmarkChild {
    /// The child process.
    public let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private lazy var lines = LineReader(descriptor: output.fileHandleForReading.fileDescriptor)

    /// Starts this benchmark again as `--child ARGUMENTS…`.
    /// - Throws: when the process cannot be started.
    public init(_ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = ["--child"] + arguments
        process.standardInput = input
        process.standardOutput = output
        try process.run()
    }

    /// The next line the child prints (blocking), or `nil` at its end of output.
    public func readLine() -> String? {
        lines.readLine()
    }

    /// Sends one line to the child's standard input.
    public func send(_ line: String = "go") { input.fileHandleForWriting.write(Data((line + "\n").utf8)) }

    /// Ends the child's standard input and waits for it to exit.
    public func stop() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}
