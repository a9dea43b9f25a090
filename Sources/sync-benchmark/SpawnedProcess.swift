import BenchmarkSupport
import Foundation
import Glibc

/// A program the benchmark started (Apache, a `clouddocsd`), spawned with `posix_spawn` in a
/// process group of its own with default signal handling, its output appended to a log file.
///
/// ``stop()`` signals that process group only (the program and what it forked), waits a bounded
/// time for the program to exit, then SIGKILLs the group and reaps the program.
final class SpawnedProcess {
    let pid: pid_t
    let logURL: URL
    private var reaped = false
    private var stopped = false

    init(executable: String, arguments: [String], environment: [String: String] = [:], logURL: URL) throws(BenchmarkError) {
        self.logURL = logURL
        let log = open(logURL.path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard log >= 0 else { throw BenchmarkError("open \(logURL.path): errno \(errno)") }
        defer { close(log) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, log, 1)
        posix_spawn_file_actions_adddup2(&actions, log, 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))
        let merged = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var child: pid_t = 0
        let status = posix_spawn(&child, executable, &actions, &attributes, argv, envp)
        guard status == 0 else { throw BenchmarkError("posix_spawn \(executable): errno \(status)") }
        pid = child
    }

    /// Whether the program has not exited (reaps it when it has).
    var isRunning: Bool {
        guard !reaped else { return false }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid { reaped = true }
        return !reaped
    }

    /// Stops the program and its process group: SIGTERM, up to 10 s for it to exit, then SIGKILL.
    /// Idempotent (the group is never signalled again: its number could be reused).
    func stop() {
        guard !stopped else { return }
        stopped = true
        guard isRunning else { kill(-pid, SIGKILL); return }
        kill(-pid, SIGTERM)
        let deadline = Measure.now() + 10_000_000_000
        while isRunning && Measure.now() < deadline { usleep(10_000) }
        kill(-pid, SIGKILL)
        if !reaped {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            reaped = true
        }
    }

    deinit { stop() }

    /// The last `lines` lines of the log, for failure messages.
    func logTail(_ lines: Int = 10) -> String {
        let text = (try? String(contentsOf: logURL, encoding: .utf8)) ?? ""
        return "--- \(logURL.path):\n" + text.split(separator: "\n").suffix(lines).joined(separator: "\n")
    }

    /// A line of `/proc/PID/status` (`VmHWM`, `VmRSS`) in KiB, or `nil` when it cannot be read.
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
