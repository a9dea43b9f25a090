import Foundation
import Glibc
import SystemSupport

/// A copy of the running benchmark started as a child process (`--child ARGUMENTS…`), driven
/// through pipes: lines in on standard input, lines out on standard output. Shared by the
/// benchmarks that measure across processes.
public final class BenchmarkChild {
    public let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private lazy var lines = LineReader(descriptor: output.fileHandleForReading.fileDescriptor)

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

    public func send(_ line: String = "go") { input.fileHandleForWriting.write(Data((line + "\n").utf8)) }

    /// Ends the child's standard input and waits for it to exit.
    public func stop() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}
