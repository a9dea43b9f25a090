import Foundation
import Glibc

/// What the parent prints about a worker that did not stop: each thread's state, wait channel and
/// kernel stack (threads alike are grouped), then the kernel's locks on lock-directory files.
enum HangDiagnostics {
    static func report(pid: Int32, lockDirectory: LockDirectoryInfo) -> [String] {
        var output: [String] = []
        let taskFolder = "/proc/\(pid)/task"
        let tasks = ((try? FileManager.default.contentsOfDirectory(atPath: taskFolder)) ?? []).sorted { (Int($0) ?? 0) < (Int($1) ?? 0) }
        // Threads with the same state, wait channel and stack are listed once.
        var groups: [String: [String]] = [:]
        var order: [String] = []
        for task in tasks {
            let base = "\(taskFolder)/\(task)"
            let name = read(base + "/comm").trimmingCharacters(in: .whitespacesAndNewlines)
            let state = threadState(read(base + "/stat"))
            let channel = read(base + "/wchan")
            let key = "state \(state), wchan \(channel.isEmpty ? "?" : channel)" + kernelStack(read(base + "/stack"))
            if groups[key] == nil { order.append(key) }
            groups[key, default: []].append("\(task) \(name)")
        }
        output.append("    \(tasks.count) threads:")
        for key in order {
            let threads = groups[key] ?? []
            let shown = threads.prefix(6).joined(separator: ", ") + (threads.count > 6 ? ", …" : "")
            output.append("      \(threads.count) × [\(shown)] \(key)")
        }
        let locks = lockDirectory.kernelLocks()
        output.append("    /proc/locks on files of the lock directory (\(locks.count)):")
        output += locks.prefix(40).map { "      " + $0 }
        if locks.count > 40 { output.append("      … \(locks.count - 40) more") }
        return output
    }

    /// Which of `processes` hold which locks on lock-directory files: /proc/<pid>/fdinfo lists
    /// the locks held through each open file description (OFD locks show pid -1 in /proc/locks, so
    /// this is how a holder is found). Waiters are not listed there; /proc/locks shows them (`->`).
    static func lockHolders(_ processes: [(name: String, pid: Int32)], lockDirectory: LockDirectoryInfo) -> [String] {
        let prefix = lockDirectory.path + "/"
        var lines: [String] = []
        for process in processes {
            let folder = "/proc/\(process.pid)/fdinfo"
            for descriptor in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
                let info = read(folder + "/" + descriptor)
                guard info.contains("lock:"),
                      let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(process.pid)/fd/\(descriptor)"),
                      target.hasPrefix(prefix) else { continue }
                for line in info.split(separator: "\n") where line.hasPrefix("lock:") {
                    let fields = line.dropFirst("lock:".count).split(separator: " ")
                    // "1: OFDLCK ADVISORY WRITE -1 fe:00:123 1 1": the kind and the byte range.
                    let kind = fields.count > 3 ? String(fields[3]) : "?"
                    let range = fields.count > 7 ? " bytes \(fields[6])–\(fields[7])" : ""
                    lines.append("\(process.name) holds \(kind)\(range) on \(target.dropFirst(prefix.count)) (fd \(descriptor))")
                }
            }
        }
        return lines
    }

    /// "; kernel stack: a < b < c" from /proc/…/stack, without offsets and the system-call entry.
    private static func kernelStack(_ text: String) -> String {
        let frames = text.split(separator: "\n").compactMap { line -> String? in
            guard let name = line.split(separator: " ").last?.split(separator: "+").first else { return nil }
            return name.hasPrefix("do_syscall_64") || name.hasPrefix("entry_SYSCALL") ? nil : String(name)
        }
        return frames.isEmpty ? "" : "; kernel stack: " + frames.prefix(8).joined(separator: " < ")
    }

    private static func read(_ path: String) -> String {
        guard let data = FileManager.default.contents(atPath: path) else { return "" }
        return String(decoding: data, as: UTF8.self)
    }

    /// The state letter of a /proc/…/stat line (the field after the parenthesised name).
    private static func threadState(_ stat: String) -> String {
        guard let close = stat.lastIndex(of: ")") else { return "?" }
        return stat[stat.index(after: close)...].split(separator: " ").first.map(String.init) ?? "?"
    }
}
