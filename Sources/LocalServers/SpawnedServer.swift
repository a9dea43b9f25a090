import CSystemShim
import Foundation
import Glibc

/// A server program (Apache, WsgiDAV, `rclone serve`) started for the tests' `WebDAVServer`, the
/// `sync-benchmark` and the `sync-demo`, spawned with `posix_spawn` in a process group of
/// its own, with an empty signal mask and default signal handlers (a test runner's worker thread
/// blocks SIGTERM, and a child inherits that: Apache and Python would then ignore SIGTERM), its
/// output appended to a log file, and no other descriptor of the test process.
///
/// ``stop()`` sends SIGTERM to that process group only (the server and the workers it forked, no
/// other process), waits up to 10 s for the server to exit, then SIGKILLs the group; it reaps the
/// server itself with `waitpid` on its PID.
package final class SpawnedServer: Sendable {
    package let pid: pid_t
    package let logURL: URL
    /// Whether the server was reaped.
    private let reaped = LockedFlag(false)
    /// Whether ``stop()`` ran (its process-group kills are never repeated: the group's number could
    /// be reused once all its members are gone).
    private let stopped = LockedFlag(false)

    /// Starts `executable` with `arguments` and this process's environment plus `environment`.
    /// - Throws: ``LocalServerError`` when the log cannot be opened or the spawn fails.
    package init(executable: URL, arguments: [String], environment: [String: String], logURL: URL) throws(LocalServerError) {
        self.logURL = logURL
        let log = open(logURL.path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard log >= 0 else { throw LocalServerError( "open \(logURL.path): errno \(errno)") }
        defer { close(log) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, log, 1)
        posix_spawn_file_actions_adddup2(&actions, log, 2)
        // Every other descriptor of the test process is closed in the child: the test runner's
        // other tests hold pipes to their own children, and a long-lived server that inherited a
        // pipe's write end would keep that child from ever seeing the end of its input.
        cshim_spawn_file_actions_addclosefrom(&actions, 3)
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
        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var child: pid_t = 0
        let status = posix_spawn(&child, executable.path, &actions, &attributes, argv, envp)
        guard status == 0 else { throw LocalServerError( "posix_spawn \(executable.path): errno \(status)") }
        pid = child
    }

    /// Whether the server has not exited (reaps it when it has).
    package var isRunning: Bool {
        reaped.withLock { reaped in
            guard !reaped else { return false }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid { reaped = true }
            return !reaped
        }
    }

    /// Stops the server and its workers (its process group). Idempotent; bounded: SIGKILL after 10 s.
    package func stop() {
        guard stopped.withLock({ stopped in
            defer { stopped = true }
            return !stopped
        }) else { return }
        guard isRunning else {
            kill(-pid, SIGKILL)   // workers a dead server may have left in its group
            return
        }
        kill(-pid, SIGTERM)
        // A grace period for a clean exit, not a synchronisation: SIGKILL ends it anyway.
        if !Self.holds(within: .seconds(10), { !isRunning }) {
            kill(-pid, SIGKILL)
            reaped.withLock { reaped in
                guard !reaped else { return }
                var status: Int32 = 0
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                reaped = true
            }
        }
        kill(-pid, SIGKILL)
    }

    deinit { stop() }

    /// Checks `condition` every 10 ms until it holds (true) or `timeout` passes (false).
    private static func holds(within timeout: Duration, _ condition: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition() { return true }
            usleep(10_000)
        }
        return condition()
    }

    /// The last `lines` lines of the log.
    package func logTail(_ lines: Int = 15) -> String {
        let text = (try? String(contentsOf: logURL, encoding: .utf8)) ?? ""
        return "--- \(logURL.path), last lines:\n"
            + text.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines).joined(separator: "\n")
    }
}
