import Foundation
import Glibc
import LocalServers

/// What the kernel says about a spawned process's use of memory and CPU (`/proc/PID/…`).
extension SpawnedServer {
    /// A `kB` value of `/proc/PID/status` (`VmHWM`: peak resident memory), in KiB.
    func statusValueKiB(_ key: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(key + ":") {
            return Int(line.dropFirst(key.count + 1).split(whereSeparator: \.isWhitespace).first ?? "")
        }
        return nil
    }

    /// User plus system CPU time used so far, in seconds (`/proc/PID/stat` fields 14 and 15).
    func cpuSeconds() -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        // Fields after the command name start at field 3.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}
