import Foundation
import Glibc

/// The demo: sets up a private Apache and two devices with an agent each in a temporary folder,
/// runs ``SyncSteps``, and always stops what it started (by PID) and removes the folder (see
/// ``Cleanup``: also after an error and on Ctrl-C).
@MainActor
enum SyncDemo {
    /// Returns the exit status: 0 when the demo ran or was skipped (apache2 missing), 1 on a failure.
    static func run() async -> Int32 {
        Narration.begin()
        Narration.say("CloudDocuments sync demo: two devices, one document, a local WebDAV server.")
        guard LocalApache.isInstalled else {
            Narration.say("""
                \n\(LocalApache.executable) (with mod_dav_fs) is missing: the demo is skipped.
                Install Apache with `sudo apt-get install apache2` and run the demo again. The demo starts
                its own private server on 127.0.0.1; the system's apache2 service need not run.
                """)
            return 0
        }
        guard let agentExecutable = BuiltTools.find("clouddocsd") else {
            Narration.say("""
                \nclouddocsd is not built next to this demo (\(BuiltTools.folder.path)).
                Build it first: `swift build --product clouddocsd`, or everything: `swift build && swift run sync-demo`.
                """)
            return 1
        }
        let work: URL
        do { work = try makeTemporaryFolder() } catch {
            Narration.say("sync-demo: \(error)")
            return 1
        }
        // Conflict versions go to a version store in the folder (this process's and, inherited,
        // the agents'), not the user's: the demo leaves nothing behind.
        setenv("CLOUDDOCUMENTS_VERSION_STORE", work.appending(path: "versions").path, 1)
        let cleanup = Cleanup()
        cleanup.add {
            try? FileManager.default.removeItem(at: work)
            Narration.event("stopped what the demo started; removed \(work.path)")
        }
        let signalSources = cleanup.runOnStopSignals()
        defer {
            Narration.step(6, "Cleaning up: stopping both agents and Apache (by PID), removing the folder")
            cleanup.run()
            withExtendedLifetime(signalSources) {}
        }
        do {
            Narration.step(1, "A private Apache mod_dav server on 127.0.0.1 (FileETag Digest: strong ETags)")
            let server = try await LocalApache(work: work.appending(path: "server", directoryHint: .isDirectory), cleanup: cleanup)
            Narration.event("Apache (pid \(server.pid)) serves \(server.baseURL.absoluteString)")

            Narration.step(2, "Two devices, A and B: each a root folder, a ubiquity.conf (provider = agent) and a clouddocsd")
            let a = try await device("A", in: work, server: server.baseURL, agent: agentExecutable, cleanup: cleanup)
            let b = try await device("B", in: work, server: server.baseURL, agent: agentExecutable, cleanup: cleanup)
            try await SyncSteps(a: a, b: b).run()
            Narration.say("\nDone: the edit travelled, the unsaved edit was kept, and the conflict was resolved on both devices.")
            return 0
        } catch {
            Narration.say("\nsync-demo failed: \(error)")
            return 1
        }
    }

    /// Makes the device `name` and starts its agent.
    private static func device(_ name: String, in work: URL, server: URL, agent: URL, cleanup: Cleanup) async throws -> Device {
        let device = try Device(name, in: work, server: server)
        let pid = try await device.startAgent(agent, cleanup: cleanup)
        Narration.event("device \(name): root \(device.root.path), clouddocsd pid \(pid)")
        return device
    }

    private static func makeTemporaryFolder() throws -> URL {
        let template = URL(fileURLWithPath: NSTemporaryDirectory()).appending(path: "sync-demo-XXXXXX").path
        var bytes = Array(template.utf8CString)
        guard let made = mkdtemp(&bytes) else { throw DemoFailure("mkdtemp \(template): errno \(errno)") }
        // As root, Apache's workers run as www-data and must reach the served folder inside.
        if geteuid() == 0 { chmod(made, 0o755) }
        return URL(fileURLWithPath: String(cString: made), isDirectory: true)
    }
}
