import Foundation
import Glibc

/// Every thread's backtrace of a hung worker, taken by attaching a debugger in batch mode — `lldb`
/// or `gdb`, whichever works (found on `PATH`, in /opt/swift/usr/bin or /usr/bin) — written to a
/// file, with Swift names demangled by `swift-demangle` when it is there. Bounded: a debugger still
/// running after `seconds` is killed.
enum DebuggerBacktrace {
    /// Writes the backtraces of `pid` to `file`; returns a summary: the debugger used and one
    /// line per thread (its header), or why there are none.
    static func capture(pid: Int32, into file: URL, seconds: Int = 120) -> [String] {
        var problems: [String] = []
        for (debugger, arguments) in commands(pid: pid) {
            guard run(debugger, arguments, output: file, seconds: seconds) else {
                problems.append("\(debugger.lastPathComponent) did not finish in \(seconds) s")
                continue
            }
            let text = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
            let headers = text.split(separator: "\n").filter { $0.contains("thread #") || $0.hasPrefix("Thread ") }
            guard !headers.isEmpty else {
                problems.append("\(debugger.lastPathComponent): " + (text.split(separator: "\n").first.map(String.init) ?? "no output"))
                continue
            }
            demangle(file)
            let demangled = (try? String(contentsOf: file, encoding: .utf8)) ?? text
            return ["\(debugger.lastPathComponent): \(headers.count) threads, every backtrace in \(file.path)"]
                + summary(demangled)
        }
        return problems.isEmpty ? ["no lldb or gdb found: no backtraces"] : ["no backtraces: " + problems.joined(separator: "; ")]
    }

    /// The modules whose frames say what a thread is doing.
    static let interestingModules = ["FileCoordination", "CloudDocuments", "ExampleDocuments", "coordination_soak"]

    /// One entry per thread that has frames of ``interestingModules``: its header and its first
    /// such frames (the innermost); the other threads (idle pool threads) are only counted.
    static func summary(_ text: String) -> [String] {
        var blocks: [(header: String, frames: [String])] = []
        for line in text.split(separator: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("Thread ") || trimmed.hasPrefix("thread #") || trimmed.hasPrefix("* thread #") {
                blocks.append((trimmed, []))
            } else if !blocks.isEmpty, trimmed.hasPrefix("#") || trimmed.hasPrefix("frame #") || trimmed.hasPrefix("* frame #") {
                blocks[blocks.count - 1].frames.append(trimmed)
            }
        }
        var lines: [String] = []
        var idle = 0
        for block in blocks {
            // A module's name, or its source folder (the simplified demangling drops module names).
            let interesting = block.frames.filter { frame in
                interestingModules.contains { frame.contains($0) } || frame.contains("/Sources/") || frame.contains("/Examples/")
            }
            guard !interesting.isEmpty else {
                idle += 1
                continue
            }
            lines.append("  " + String(block.header.prefix(120)))
            if let top = block.frames.first { lines.append("      " + String(top.prefix(160))) }
            // The innermost frames (what it waits in) and the outermost (who asked for it).
            let shown = interesting.count <= 8 ? interesting : Array(interesting.prefix(4)) + ["…"] + Array(interesting.suffix(4))
            for frame in shown where frame != block.frames.first { lines.append("      " + String(frame.prefix(200))) }
        }
        if idle > 0 { lines.append("  \(idle) other threads without frames of \(interestingModules.joined(separator: ", "))") }
        return lines
    }

    private static func commands(pid: Int32) -> [(URL, [String])] {
        var commands: [(URL, [String])] = []
        if let lldb = find("lldb") {
            commands.append((lldb, ["--batch", "--no-lldbinit", "-p", String(pid), "-o", "thread backtrace all", "-o", "process detach"]))
        }
        if let gdb = find("gdb") {
            commands.append((gdb, ["-batch", "-nx", "-p", String(pid), "-ex", "thread apply all bt"]))
        }
        return commands
    }

    /// Runs `executable` with its output (both streams) into `output`; false when it had to be killed.
    private static func run(_ executable: URL, _ arguments: [String], input: URL? = nil, output: URL, seconds: Int) -> Bool {
        guard FileManager.default.createFile(atPath: output.path, contents: nil),
              let handle = try? FileHandle(forWritingTo: output) else { return false }
        defer { try? handle.close() }
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = input.flatMap { try? FileHandle(forReadingFrom: $0) } ?? FileHandle.nullDevice
        do { try process.run() } catch { return false }
        let deadline = MonotonicClock.now() + UInt64(seconds) * 1_000_000_000
        while process.isRunning && MonotonicClock.now() < deadline { usleep(100_000) }
        guard !process.isRunning else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return false
        }
        return true
    }

    /// Replaces `file` by its demangled text (left as it is without `swift-demangle`).
    private static func demangle(_ file: URL) {
        guard let tool = find("swift-demangle") else { return }
        let demangled = file.appendingPathExtension("demangled")
        if run(tool, ["--simplified"], input: file, output: demangled, seconds: 60),
           (try? FileManager.default.attributesOfItem(atPath: demangled.path)[.size] as? Int) ?? 0 > 0,
           rename(demangled.path, file.path) == 0 {
            return
        }
        unlink(demangled.path)
    }

    private static func find(_ name: String) -> URL? {
        var folders = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        folders += ["/opt/swift/usr/bin", "/usr/bin"]
        for folder in folders {
            let path = folder + "/" + name
            if access(path, X_OK) == 0 { return URL(fileURLWithPath: path) }
        }
        return nil
    }
}
