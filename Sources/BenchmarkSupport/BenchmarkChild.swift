import Foundation
import Glibc

/// A copy of the running benchmark started as a child process (`--child ARGUMENTS…`), driven
/// through pipes: lines in on standard input, lines out on standard output. Shared by the
/// benchmarks that measure across processes.
public final class BenchmarkChild {
    public let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private var buffer: [UInt8] = []

    public init(_ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = ["--child"] + arguments
        process.standardInput = input
        process.standardOutput = output
        try process.run()
    }

    /// The next line the child prints (blocking), or `nil` at its end of output.
    public func readLine() -> String? {
        let fd = output.fileHandleForReading.fileDescriptor
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                defer { buffer.removeFirst(newline + 1) }
                return String(decoding: buffer[..<newline], as: UTF8.self)
            }
            var chunk = [UInt8](repeating: 0, count: 512)
            let count = read(fd, &chunk, chunk.count)
            guard count > 0 else { return nil }
            buffer += chunk[..<count]
        }
    }

    public func send(_ line: String = "go") { input.fileHandleForWriting.write(Data((line + "\n").utf8)) }

    /// Ends the child's standard input and waits for it to exit.
    public func stop() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}
