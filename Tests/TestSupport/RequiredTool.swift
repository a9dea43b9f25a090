import Foundation

/// A real program some tests need (Syncthing, rclone): where it is, and what to tell the person
/// running the tests when it is missing.
///
/// The tests that need one are enabled with `.enabled(if: tool.isInstalledOrRequired, tool.missingMessage)`
/// and start with `try tool.require()`. Outside CI a missing tool therefore **skips** them with the
/// install hint; when the environment variable `CI` is set (to anything but empty, `0` or `false`)
/// they run and **fail** with the same hint, so a CI machine without the tool cannot pass by accident.
/// `Tests/run-tests.sh` installs every tool listed here before it runs `swift test`.
public struct RequiredTool: Sendable, CustomStringConvertible {
    /// The command looked up on `PATH`.
    public let command: String
    /// The Debian/Ubuntu package that provides it.
    public let debianPackage: String
    /// Why the tests need it, for the message.
    public let purpose: String
    /// Folders looked in after `PATH` (`/usr/sbin` for apache2, a virtualenv for WsgiDAV).
    public let extraDirectories: [String]
    /// How to install it, when not `apt-get install <debianPackage>`.
    public let installHint: String?

    public init(command: String, debianPackage: String, purpose: String, extraDirectories: [String] = [],
                installHint: String? = nil) {
        self.command = command
        self.debianPackage = debianPackage
        self.purpose = purpose
        self.extraDirectories = extraDirectories
        self.installHint = installHint
    }

    public static let syncthing = RequiredTool(
        command: "syncthing", debianPackage: "syncthing",
        purpose: "the tests with two real linked Syncthing instances")
    public static let rclone = RequiredTool(
        command: "rclone", debianPackage: "rclone", purpose: "the tests with real `rclone bisync` runs")
    public static let apache2 = RequiredTool(
        command: "apache2", debianPackage: "apache2", purpose: "the WebDAV tests against a real Apache mod_dav",
        extraDirectories: ["/usr/sbin"])
    /// WsgiDAV (PyPI), in the virtualenv `Tests/run-tests.sh` makes: `$WSGIDAV_VENV`, else
    /// `~/.cache/clouddocs-tests/wsgidav-venv` (or `wsgidav` on `PATH`).
    public static let wsgidav = RequiredTool(
        command: "wsgidav", debianPackage: "python3-venv", purpose: "the WebDAV probe tests against a real WsgiDAV",
        extraDirectories: wsgidavVirtualenvBinaries,
        installHint: "python3 -m venv ~/.cache/clouddocs-tests/wsgidav-venv && "
            + "~/.cache/clouddocs-tests/wsgidav-venv/bin/pip install 'wsgidav>=4,<5' cheroot")

    private static var wsgidavVirtualenvBinaries: [String] {
        let environment = ProcessInfo.processInfo.environment
        var folders: [String] = []
        if let venv = environment["WSGIDAV_VENV"], !venv.isEmpty { folders.append(venv + "/bin") }
        let cache = environment["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ((environment["HOME"] ?? NSHomeDirectory()) + "/.cache")
        folders.append(cache + "/clouddocs-tests/wsgidav-venv/bin")
        return folders
    }

    /// The executable's absolute path, or nil when it is not on `PATH`.
    public var executableURL: URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":").map(String.init) + extraDirectories where !directory.isEmpty {
            let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent(command)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }

    public var isInstalled: Bool { executableURL != nil }

    /// Whether tests needing the tool should run: it is installed, or we are in CI (where a
    /// missing tool must fail the test instead of skipping it).
    public var isInstalledOrRequired: Bool { isInstalled || Self.isCI }

    /// True when the environment variable `CI` is set to anything but empty, `0` or `false`.
    public static var isCI: Bool {
        guard let value = ProcessInfo.processInfo.environment["CI"] else { return false }
        return !["", "0", "false", "no"].contains(value.lowercased())
    }

    /// What is missing and how to get it; says whether the tests skip or fail.
    public var missingMessage: String {
        "`\(command)` is not installed, and \(purpose) need it: run `Tests/run-tests.sh` (installs what "
            + "the tests need, then runs swift test) or `\(installHint ?? "sudo apt-get install " + debianPackage)`"
            + (Self.isCI ? " (CI is set: failing instead of skipping)" : " (skipped)")
    }

    /// The executable's URL; throws ``Missing`` (with the install hint) when it is not installed.
    public func require() throws -> URL {
        guard let url = executableURL else { throw Missing(message: missingMessage) }
        return url
    }

    public var description: String { command }

    /// A needed tool is not installed.
    public struct Missing: Error, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }
}
