import FileCoordination
import Foundation
import Glibc

/// Two real, linked Syncthing instances on 127.0.0.1 sharing one folder: `a` syncs
/// ``folder(_:)`` `.a`, `b` syncs `.b`. Patterned on `../shared/peers/syncthing-pair.sh`.
///
/// Everything lives in one fresh temporary folder (homes, logs, the two synced folders); the ports
/// are picked free by the kernel, so pairs of tests running in parallel do not clash. Waits poll
/// the REST API or the files with a deadline; nothing sleeps a fixed time.
///
///     try await SyncthingPair.with { pair in
///         try put("x", at: pair.folder(.a).appendingPathComponent("doc.txt"))
///         try await pair.waitUntilInSync()
///     }
///
/// ``with(_:)`` stops both instances (by their PIDs) and removes the temporary folder whether the
/// body returns or throws. If the test process itself dies, the next pair started by any test run
/// stops the orphans (it checks that each recorded PID still runs Syncthing with that folder's home).
public final class SyncthingPair: Sendable {
    public enum Side: String, Sendable, CaseIterable {
        case a, b
        public var other: Side { self == .a ? .b : .a }
    }

    /// The folder ID shared by both instances.
    public let folderID = "shared"
    /// The temporary folder holding everything of this pair.
    public let workURL: URL
    private let folders: [Side: URL]
    private let deviceIDs: [Side: String]
    private let guiPorts: [Side: UInt16]
    private let apiKeys: [Side: String]
    private let processes: [Side: ToolProcess]
    private let stopped = Locked(false)

    /// The synced folder of one side.
    public func folder(_ side: Side) -> URL { folders[side]! }
    /// The full device ID of one side.
    public func deviceID(_ side: Side) -> String { deviceIDs[side]! }
    /// The 7 characters Syncthing writes into conflict copies' names.
    public func shortDeviceID(_ side: Side) -> String { String(deviceID(side).prefix(7)) }
    /// The side whose conflict copies are named with `party` (the winner's short device ID).
    public func side(withShortDeviceID party: String) -> Side? {
        Side.allCases.first { shortDeviceID($0) == party }
    }

    /// Runs `body` with a started pair, and always stops it and removes its files afterwards.
    public static func with<Result>(isolation: isolated (any Actor)? = #isolation,
                                    _ body: (SyncthingPair) async throws -> Result) async throws -> Result {
        let pair = try await start()
        do {
            let result = try await body(pair)
            try await offCooperativePool { pair.stop() }
            return result
        } catch {
            let details = pair.folderContents() + "\n" + pair.logTails()
            _ = try? await offCooperativePool { pair.stop() }
            pair.stop()   // in case the thread could not run it
            throw FixtureFailure(description: "\(error)\n\(details)")
        }
    }

    /// Starts both instances (b, then a, which dials b) and returns once they are connected, idle
    /// and in sync. Throws (after stopping whatever it started) when that does not happen within
    /// `timeout`.
    ///
    /// The ports are free when chosen, but another program (a parallel test's server) can take one
    /// before Syncthing binds it: a start whose instances logged "address already in use" (the GUI
    /// port: Syncthing exits; the sync port: the pair never connects) is tried again with new
    /// ports, a few times.
    public static func start(timeout: Duration = .seconds(60)) async throws -> SyncthingPair {
        let syncthing = try RequiredTool.syncthing.require()
        stopOrphans()
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await startOnce(syncthing: syncthing, timeout: timeout)
            } catch is PortTaken where attempt < startAttempts {
                continue
            } catch let error as PortTaken {
                throw error.underlying
            }
        }
    }

    /// How many times a pair that found a port taken is started again on others.
    static let startAttempts = 5

    /// A start that failed after an instance logged "address already in use".
    struct PortTaken: Error {
        let underlying: any Error
    }

    /// One try of ``start(timeout:)``, in a work folder of its own.
    private static func startOnce(syncthing: URL, timeout: Duration) async throws -> SyncthingPair {
        let work = try makeWorkFolder()
        var cleanup: [ToolProcess] = []
        do {
            try "\(getpid())\n".write(to: work.appendingPathComponent("owner.pid"), atomically: true, encoding: .utf8)
            var folders: [Side: URL] = [:], homes: [Side: URL] = [:], ids: [Side: String] = [:], keys: [Side: String] = [:]
            for side in Side.allCases {
                let folder = work.appendingPathComponent(side.rawValue.uppercased(), isDirectory: true)
                let home = work.appendingPathComponent("home-\(side.rawValue)", isDirectory: true)
                try FileManager.default.createDirectory(at: folder.appendingPathComponent(".stfolder"),
                                                        withIntermediateDirectories: true)
                folders[side] = folder
                homes[side] = home
                keys[side] = UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
                let (generated, id) = try await offCooperativePool {
                    (try ToolProcess.run(syncthing, ["generate", "--home=\(home.path)", "--no-default-folder"]),
                     try ToolProcess.run(syncthing, ["serve", "--home=\(home.path)", "--device-id"]))
                }
                guard generated.status == 0 else {
                    throw FixtureFailure(description: "syncthing generate failed: \(generated.output)")
                }
                let deviceID = id.output.trimmingCharacters(in: .whitespacesAndNewlines)
                guard id.status == 0, deviceID.count == 63 else {
                    throw FixtureFailure(description: "syncthing --device-id failed: \(id.output)")
                }
                ids[side] = deviceID
            }
            let ports = try LoopbackHTTP.freePorts(4)
            let gui: [Side: UInt16] = [.a: ports[0], .b: ports[1]]
            let listen: [Side: UInt16] = [.a: ports[2], .b: ports[3]]
            for side in Side.allCases {
                let config = SyncthingConfig(
                    deviceID: ids[side]!, deviceName: side.rawValue, peerID: ids[side.other]!,
                    peerName: side.other.rawValue,
                    // Only a dials b; b knows a as "dynamic" (nothing, with discovery off).
                    peerAddress: side == .a ? "tcp://127.0.0.1:\(listen[.b]!)" : "dynamic",
                    listenPort: listen[side]!, guiPort: gui[side]!, apiKey: keys[side]!,
                    folderID: "shared", folderPath: folders[side]!.path)
                try config.xml.write(to: homes[side]!.appendingPathComponent("config.xml"), atomically: true,
                                     encoding: .utf8)
            }
            let environment = ["STNOUPGRADE": "1", "STNORESTART": "1",
                               // Skips the start-up benchmark of SHA-256 implementations (~1 s).
                               "STHASHING": "standard"]
            var processes: [Side: ToolProcess] = [:]
            // b first: a's first dial must find b's listener, or a waits for its next dial.
            for side in [Side.b, .a] {
                let process = try ToolProcess(
                    name: "syncthing \(side.rawValue)", executable: syncthing,
                    arguments: ["serve", "--home=\(homes[side]!.path)", "--no-browser", "--no-restart",
                                "--no-upgrade", "--logflags=3"],
                    environment: environment, logURL: work.appendingPathComponent("\(side.rawValue).log"))
                cleanup.append(process)
                processes[side] = process
                try "\(process.pid)\n".write(to: work.appendingPathComponent("\(side.rawValue).pid"), atomically: true,
                                             encoding: .utf8)
                try await Polling.until("the REST API of syncthing \(side.rawValue)", timeout: timeout,
                                        details: { process.logTail() }) {
                    guard process.isRunning else {
                        throw FixtureFailure(description: "syncthing \(side.rawValue) exited\n\(process.logTail())")
                    }
                    return (try? LoopbackHTTP.request(port: gui[side]!, method: "GET", path: "/rest/system/ping",
                                                      headers: ["X-API-Key": keys[side]!], timeout: 2))?.status == 200
                }
            }
            let pair = SyncthingPair(workURL: work, folders: folders, deviceIDs: ids, guiPorts: gui, apiKeys: keys,
                                     processes: processes)
            try await pair.waitUntilInSync(timeout: timeout, scanningFirst: false)
            return pair
        } catch {
            cleanup.forEach { $0.stop() }
            let portTaken = cleanup.contains { $0.logTail(400).lowercased().contains("address already in use") }
            POSIXCleanup.removeTree(work)
            throw portTaken ? PortTaken(underlying: error) : error
        }
    }

    private init(workURL: URL, folders: [Side: URL], deviceIDs: [Side: String], guiPorts: [Side: UInt16],
                 apiKeys: [Side: String], processes: [Side: ToolProcess]) {
        self.workURL = workURL; self.folders = folders; self.deviceIDs = deviceIDs; self.guiPorts = guiPorts
        self.apiKeys = apiKeys; self.processes = processes
    }

    // MARK: REST

    /// Calls the REST API of one side; throws unless the answer is 200 OK.
    @discardableResult
    public func rest(_ side: Side, _ method: String, _ path: String, json: Any? = nil) throws -> LoopbackHTTP.Response {
        var headers = ["X-API-Key": apiKeys[side]!]
        var body: Data?
        if let json {
            body = try JSONSerialization.data(withJSONObject: json)
            headers["Content-Type"] = "application/json"
        }
        // A scan returns only when it is done; it may take a moment on a loaded machine.
        let response = try LoopbackHTTP.request(port: guiPorts[side]!, method: method, path: path, headers: headers,
                                                body: body, timeout: 30)
        guard response.status == 200 else {
            throw FixtureFailure(description: "\(method) \(path) on syncthing \(side.rawValue): HTTP \(response.status) "
                                 + String(decoding: response.body, as: UTF8.self))
        }
        return response
    }

    private func object(_ side: Side, _ path: String) throws -> [String: Any] {
        try rest(side, "GET", path).json as? [String: Any] ?? [:]
    }

    /// Whether `side` has a live connection to the other side.
    public func isConnected(_ side: Side) throws -> Bool {
        let connections = try object(side, "/rest/system/connections")["connections"] as? [String: Any]
        return (connections?[deviceID(side.other)] as? [String: Any])?["connected"] as? Bool ?? false
    }

    /// Whether `side`'s folder is idle, needs nothing, and `side` believes the other side has
    /// everything (100 % completion).
    public func isIdleAndComplete(_ side: Side) throws -> Bool {
        let status = try object(side, "/rest/db/status?folder=\(folderID)")
        guard status["state"] as? String == "idle", (status["needTotalItems"] as? Int) == 0 else { return false }
        let completion = try object(side, "/rest/db/completion?folder=\(folderID)&device=\(deviceID(side.other))")
        return (completion["completion"] as? Double) == 100 && (completion["needItems"] as? Int ?? 0) == 0
    }

    /// Makes `side` scan its folder now (Syncthing answers when the scan is done), instead of
    /// waiting for the file-system watcher's delay.
    public func rescan(_ side: Side) throws {
        try rest(side, "POST", "/rest/db/scan?folder=\(folderID)")
    }

    /// How many items `side`'s folder failed to pull in its last pull (`pullErrors` of
    /// `/rest/db/status`). Syncthing retries those only after its pull back-off (a minute, then
    /// longer), unless something schedules a pull sooner.
    public func pullErrors(_ side: Side) throws -> Int {
        try object(side, "/rest/db/status?folder=\(folderID)")["pullErrors"] as? Int ?? 0
    }

    /// Restarts `side`'s folder (paused, then resumed through the REST API, which applies each
    /// change before it answers): Syncthing starts it again with a scan and then a pull, and with
    /// its pull back-off reset. Returns once the folder runs again (it has a state; a paused
    /// folder has none).
    public func restartFolder(_ side: Side, timeout: Duration = Polling.hangGuard) async throws {
        try rest(side, "PATCH", "/rest/config/folders/\(folderID)", json: ["paused": true])
        try rest(side, "PATCH", "/rest/config/folders/\(folderID)", json: ["paused": false])
        try await Polling.until("syncthing \(side.rawValue)'s folder to run again", timeout: timeout, details: { self.logTails() }) {
            !(try object(side, "/rest/db/status?folder=\(folderID)")["state"] as? String ?? "").isEmpty
        }
    }

    /// Makes a side whose last pull failed — a file the other side was updating changed under it,
    /// say ("file modified but not rescanned") — try again now instead of after Syncthing's pull
    /// back-off (a minute, then longer): its folder is restarted. Sides whose pulls did not fail
    /// are left to Syncthing's own timing (its watcher, its scans).
    public func retryFailedPulls() async throws {
        for side in Side.allCases where try pullErrors(side) > 0 {
            try await restartFolder(side)
        }
    }

    /// Waits until both sides are connected, idle and in sync. With `scanningFirst`, both sides
    /// scan first, so local changes the watcher has not reported yet are included.
    public func waitUntilInSync(timeout: Duration = .seconds(30), scanningFirst: Bool = true) async throws {
        if scanningFirst { try rescan(.a); try rescan(.b) }
        try await Polling.until("both Syncthing instances connected, idle and in sync", timeout: timeout,
                                interval: .milliseconds(50), details: { self.logTails() }) {
            for side in Side.allCases {
                guard try isConnected(side), try isIdleAndComplete(side) else { return false }
            }
            return true
        }
    }

    /// Takes the link down: a pauses device b, and both sides see the connection gone.
    public func pauseLink(timeout: Duration = .seconds(30)) async throws {
        try rest(.a, "PATCH", "/rest/config/devices/\(deviceID(.b))", json: ["paused": true])
        try await Polling.until("the link to go down", timeout: timeout, details: { self.logTails() }) {
            try !isConnected(.a) && !isConnected(.b)
        }
    }

    /// Brings the link back up (a dials b at once) and returns once both sides are connected.
    /// Changes made meanwhile are exchanged from then on; conflicts are settled within ~0.5 s.
    public func resumeLink(timeout: Duration = .seconds(30)) async throws {
        try rest(.a, "PATCH", "/rest/config/devices/\(deviceID(.b))", json: ["paused": false])
        try await Polling.until("the link to come back", timeout: timeout, details: { self.logTails() }) {
            try isConnected(.a) && isConnected(.b)
        }
    }

    // MARK: Stopping

    /// What both folders hold (names, and the first bytes of each file), for failure messages.
    public func folderContents() -> String {
        Side.allCases.map { side in
            let folder = self.folder(side)
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
            return "--- folder \(side.rawValue.uppercased()) (device \(shortDeviceID(side))): " + names.map { name in
                guard let data = FileManager.default.contents(atPath: folder.appendingPathComponent(name).path) else { return name }
                return "\(name) = \"\(String(decoding: data.prefix(60), as: UTF8.self))\""
            }.joined(separator: ", ")
        }.joined(separator: "\n")
    }

    /// The tails of both logs, for failure messages.
    public func logTails() -> String {
        Side.allCases.compactMap { processes[$0]?.logTail() }.joined(separator: "\n")
    }

    /// Stops both instances by their PIDs and removes the temporary folder. Idempotent.
    public func stop() {
        let first = stopped.withLock { already in
            defer { already = true }
            return !already
        }
        guard first else { return }
        // Stop both at once: send both SIGTERMs before waiting.
        let group = DispatchGroup()
        for process in processes.values {
            DispatchQueue.global().async(group: group) { process.stop() }
        }
        group.wait()
        // CLOUDDOCS_KEEP_SYNC_FIXTURES=1 keeps the folders and logs for a look afterwards.
        if ProcessInfo.processInfo.environment["CLOUDDOCS_KEEP_SYNC_FIXTURES"] == "1" {
            print("SyncthingPair: kept \(workURL.path)")
        } else {
            POSIXCleanup.removeTree(workURL)
        }
    }

    deinit { stop() }

    // MARK: Temporary folders and orphans

    private static let workPrefix = "clouddocs-syncthing-"

    private static func makeWorkFolder() throws -> URL {
        let template = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("\(workPrefix)XXXXXX").path
        var bytes = Array(template.utf8CString)
        guard let made = mkdtemp(&bytes) else { throw FixtureFailure(description: "mkdtemp: errno \(errno)") }
        return URL(fileURLWithPath: String(cString: made), isDirectory: true)
    }

    /// Stops the instances of pairs whose test process died without stopping them, and removes
    /// their folders. A PID is killed only if its command line still names that pair's home.
    private static func stopOrphans() {
        let temporary = URL(fileURLWithPath: NSTemporaryDirectory())
        let names = (try? FileManager.default.contentsOfDirectory(atPath: temporary.path)) ?? []
        for name in names where name.hasPrefix(workPrefix) {
            let work = temporary.appendingPathComponent(name)
            guard let owner = pidFile(work.appendingPathComponent("owner.pid")),
                  kill(owner, 0) != 0 && errno == ESRCH else { continue }
            for side in Side.allCases {
                guard let pid = pidFile(work.appendingPathComponent("\(side.rawValue).pid")),
                      let commandLine = try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline")),
                      String(decoding: commandLine, as: UTF8.self).contains(work.appendingPathComponent("home-\(side.rawValue)").path)
                else { continue }
                kill(pid, SIGKILL)
            }
            POSIXCleanup.removeTree(work)
        }
    }

    private static func pidFile(_ url: URL) -> pid_t? {
        (try? String(contentsOf: url, encoding: .utf8)).flatMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }
}

/// A fixture could not do its part (a real tool failed or timed out); the message carries the
/// tool's log where there is one.
public struct FixtureFailure: Error, CustomStringConvertible {
    public let description: String
    public init(description: String) { self.description = description }
}

/// Removing a fixture's temporary folder, whatever is in it.
enum POSIXCleanup {
    static func removeTree(_ url: URL) {
        try? FileManager.default.removeItem(at: url)
    }
}
