import FileCoordination
import Foundation

/// Two local folders kept in sync by real `rclone bisync` runs (rclone 1.60, Debian 12), patterned
/// on `../shared/peers/rclone-bisync.sh`. Each ``run()`` is one bisync run, like a cron job would
/// make; the first one adds `--resync`, which bisync needs to make its first listings.
///
/// Both folders start with a subfolder `unchanged/` of 8 files that tests leave alone, as a real
/// folder has files nobody touches: bisync aborts a run in which every file changed on one side
/// ("Safety abort: all files were changed"), or more than half of them were deleted ("too many
/// deletes", `--max-delete` 50 %), which a test folder holding one document and its conflict copies
/// would hit at once.
///
/// ``with(_:)`` removes the temporary folder (both paths and bisync's listings) whether the body
/// returns or throws. No rclone config file is read or written (`RCLONE_CONFIG=/dev/null`).
public final class RcloneBisync: Sendable {
    public enum Side: String, Sendable, CaseIterable {
        case path1, path2
        public var other: Side { self == .path1 ? .path2 : .path1 }
    }

    /// The temporary folder holding both paths and bisync's working folder.
    public let workURL: URL
    /// Whether the listings exist (a run succeeded), so later runs need no `--resync`.
    private let hasListings = Locked(false)
    private let rclone: URL

    /// The name of the subfolder both folders hold and tests leave alone.
    public static let unchangedFolderName = "unchanged"

    public func folder(_ side: Side) -> URL { workURL.appendingPathComponent(side.rawValue, isDirectory: true) }
    private var stateURL: URL { workURL.appendingPathComponent("bisync-state", isDirectory: true) }

    /// Makes the two folders (in a fresh temporary folder) with the unchanged files in path1; the
    /// first ``run()`` copies them to path2.
    public init() throws {
        rclone = try RequiredTool.rclone.require()
        let template = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("clouddocs-rclone-XXXXXX").path
        var bytes = Array(template.utf8CString)
        guard let made = mkdtemp(&bytes) else { throw FixtureFailure(description: "mkdtemp: errno \(errno)") }
        workURL = URL(fileURLWithPath: String(cString: made), isDirectory: true)
        for folder in [workURL.appendingPathComponent("path1"), workURL.appendingPathComponent("path2"),
                       workURL.appendingPathComponent("bisync-state")] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        let unchanged = workURL.appendingPathComponent("path1").appendingPathComponent(Self.unchangedFolderName)
        try FileManager.default.createDirectory(at: unchanged, withIntermediateDirectories: true)
        for number in 1...8 {
            try Data("left alone by the tests\n".utf8).write(to: unchanged.appendingPathComponent("\(number).txt"))
        }
    }

    /// Runs `body` with a fresh pair of folders and removes them afterwards.
    public static func with<Result>(isolation: isolated (any Actor)? = #isolation,
                                    _ body: (RcloneBisync) async throws -> Result) async throws -> Result {
        let bisync = try RcloneBisync()
        defer { bisync.remove() }
        return try await body(bisync)
    }

    /// One `rclone bisync path1 path2` run (with `--resync` the first time, or when `resync` is
    /// true), off the caller's thread. Returns rclone's log (`-v`); throws with the log when rclone
    /// fails.
    ///
    /// `--resync` makes bisync take both folders as they are for its new listings (copying what
    /// only one of them has, and path1's version where they differ). rclone 1.60 needs it after
    /// both folders changed the same name independently since the last run — even to the same
    /// bytes and time, which it still calls a conflict.
    @discardableResult
    public func run(resync forced: Bool = false) async throws -> String {
        let resync = forced || hasListings.withLock { !$0 }
        var arguments = ["bisync", folder(.path1).path, folder(.path2).path, "--workdir", stateURL.path, "-v"]
        if resync { arguments.append("--resync") }
        let rclone = self.rclone, fixedArguments = arguments
        let (status, output) = try await offCooperativePool {
            try ToolProcess.run(rclone, fixedArguments, environment: ["RCLONE_CONFIG": "/dev/null"])
        }
        guard status == 0 else {
            throw FixtureFailure(description: "rclone \(arguments.joined(separator: " ")) exited with \(status):\n\(output)")
        }
        hasListings.withLock { $0 = true }
        return output
    }

    /// Removes both folders and bisync's listings. Idempotent.
    public func remove() {
        try? FileManager.default.removeItem(at: workURL)
    }
}
