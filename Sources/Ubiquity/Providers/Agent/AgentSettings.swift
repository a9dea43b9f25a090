import Foundation

/// The sync agent's part of `ubiquity.conf` (with `provider = agent`):
///
/// ```
/// provider = agent
/// root = /home/ada/Cloud
/// container = com.example.notes
/// server = https://cloud.example.com/remote.php/dav/files/ada/Apps
/// user = ada
/// password-file = /home/ada/.config/clouddocuments/password   # mode 0600
/// poll-interval = 30                  # seconds between looks at the server
/// insecure-http = allow               # only to use plain http with a host that is not loopback
/// hold-deletions-over-share = 0.5     # a server-side deletion of more than half a container…
/// hold-deletions-over-count = 100     # …or of more than 100 items waits for approval
/// package-extensions = pages, album   # folders with these extensions sync as one document
/// space-budget = 2G                   # per container: evict least recently used documents above it
/// ```
///
/// Each container syncs with the collection `server/IDENTIFIER/`. The password is never written
/// in the file itself: it comes from `$CLOUDDOCUMENTS_AGENT_PASSWORD` or from `password-file`,
/// which must be readable by its owner only (``password(environment:)``). It is never logged and
/// never shown by `clouddocs agent status`.
public struct AgentSettings: Sendable, Hashable {
    /// The WebDAV collection that holds one collection per container.
    public var server: URL?
    /// The user name for HTTP Basic authentication.
    public var user: String?
    /// The file holding the password (mode 0600).
    public var passwordFile: URL?
    /// Seconds between polls of the server.
    public var pollInterval: Double
    /// Whether plain `http` may be used with a host that is not a loopback address.
    public var allowsInsecureHTTP: Bool
    /// A server-side deletion of more than this share of a container's items is held.
    public var holdDeletionsOverShare: Double
    /// A server-side deletion of more than this many items is held.
    public var holdDeletionsOverCount: Int
    /// The extensions (lowercased, without the dot) of package documents: folders synced as one
    /// unit. The agent also registers them with `Coordinator.registerPackageExtension(_:)`.
    public var packageExtensions: Set<String> = []
    /// The most bytes of downloaded documents each container may hold, or `nil` (no budget):
    /// after a pass, while a container holds more, the agent evicts its least recently used
    /// unpinned, uploaded, closed documents (Docs/FilesOnDemand.md).
    public var spaceBudget: Int64?

    /// The defaults: no server, a 30 s poll, https only, deletions held above half or 100 items.
    public init(server: URL? = nil, user: String? = nil, passwordFile: URL? = nil, pollInterval: Double = 30,
                allowsInsecureHTTP: Bool = false, holdDeletionsOverShare: Double = 0.5, holdDeletionsOverCount: Int = 100) {
        self.server = server
        self.user = user
        self.passwordFile = passwordFile
        self.pollInterval = pollInterval
        self.allowsInsecureHTTP = allowsInsecureHTTP
        self.holdDeletionsOverShare = holdDeletionsOverShare
        self.holdDeletionsOverCount = holdDeletionsOverCount
    }

    /// The environment variable that holds the password (preferred over `password-file`).
    public static let passwordEnvironmentKey = "CLOUDDOCUMENTS_AGENT_PASSWORD"
    /// The environment variable that overrides `server =`.
    public static let serverEnvironmentKey = "CLOUDDOCUMENTS_AGENT_SERVER"

    /// The configuration keys this struct reads.
    static let keys: Set<String> = ["server", "user", "password-file", "poll-interval", "insecure-http",
                                    "hold-deletions-over-share", "hold-deletions-over-count", "package-extensions",
                                    "space-budget"]

    /// Applies one `key = value` line; returns why the value is invalid, or `nil`.
    mutating func apply(key: String, value: String) -> String? {
        switch key {
        case "server":
            guard let url = URL(string: value), let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http",
                  url.host() != nil else { return "`\(value)` is not an http or https URL" }
            guard url.user() == nil, url.password() == nil else {
                return "put the user in `user =` and the password in a password file, not in the URL"
            }
            server = url
        case "user":
            user = value.isEmpty ? nil : value
        case "password-file":
            guard value.hasPrefix("/") else { return "the password file must be an absolute path" }
            passwordFile = URL(fileURLWithPath: value)
        case "poll-interval":
            guard let seconds = Double(value), seconds.isFinite, seconds >= 0.1, seconds <= 86_400 else {
                return "the poll interval is a number of seconds between 0.1 and 86400"
            }
            pollInterval = seconds
        case "insecure-http":
            switch value.lowercased() {
            case "allow", "yes", "true": allowsInsecureHTTP = true
            case "refuse", "no", "false": allowsInsecureHTTP = false
            default: return "insecure-http is `allow` or `refuse`"
            }
        case "hold-deletions-over-share":
            guard let share = Double(value), share.isFinite, share >= 0, share <= 1 else {
                return "the share is a number between 0 and 1"
            }
            holdDeletionsOverShare = share
        case "hold-deletions-over-count":
            guard let count = Int(value), count >= 0 else { return "the count is a whole number ≥ 0" }
            holdDeletionsOverCount = count
        case "package-extensions":
            let names = value.split(whereSeparator: { $0 == "," || $0 == " " }).map {
                ($0.hasPrefix(".") ? String($0.dropFirst()) : String($0)).lowercased()
            }
            guard names.allSatisfy({ !$0.isEmpty && !$0.contains("/") && !$0.contains(".") }) else {
                return "package-extensions is a list of extensions such as `pages, album`"
            }
            packageExtensions.formUnion(names)
        case "space-budget":
            guard let bytes = Self.byteCount(value) else {
                return "space-budget is a size such as `500M` or `2G` (bytes, or K, M, G, T: powers of 1024), or `none`"
            }
            spaceBudget = bytes == 0 ? nil : bytes
        default:
            return "unknown key `\(key)`"
        }
        return nil
    }

    /// `2G`, `500M`, `1.5G`, `4096` (bytes), `none` (0): the number of bytes, or `nil` when not a
    /// size. K, M, G and T are powers of 1024 (`KiB`, `MB`… are read the same).
    static func byteCount(_ text: String) -> Int64? {
        let value = text.trimmingCharacters(in: .whitespaces).lowercased()
        if value == "none" || value == "off" { return 0 }
        var digits = value
        var unit = ""
        while let last = digits.last, last.isLetter {
            unit = String(last) + unit
            digits.removeLast()
        }
        let multipliers: [String: Double] = ["": 1, "b": 1, "k": 0x1p10, "m": 0x1p20, "g": 0x1p30, "t": 0x1p40]
        let key = unit.hasSuffix("ib") ? String(unit.dropLast(2)) : unit.hasSuffix("b") && unit.count == 2 ? String(unit.dropLast()) : unit
        guard let multiplier = multipliers[key], let number = Double(digits.trimmingCharacters(in: .whitespaces)),
              number.isFinite, number >= 0 else { return nil }
        let bytes = number * multiplier
        guard bytes < 9.0e18 else { return nil }
        return Int64(bytes)
    }

    /// The password: `$CLOUDDOCUMENTS_AGENT_PASSWORD` when set, else the first line of
    /// ``passwordFile``, else `nil` (no authentication).
    ///
    /// - Throws: ``UbiquityError/configurationInvalid(path:line:reason:)`` when the password file
    ///   can be read by its group or others, is not owned by this user, or cannot be read — the
    ///   message never contains the password.
    public func password(environment: [String: String]) throws(UbiquityError) -> String? {
        if let fromEnvironment = environment[Self.passwordEnvironmentKey], !fromEnvironment.isEmpty { return fromEnvironment }
        guard let file = passwordFile else { return nil }
        var info = stat()
        guard stat(file.path, &info) == 0 else {
            throw .configurationInvalid(path: file.path, line: 0, reason: "the password file cannot be read")
        }
        guard info.st_mode & 0o077 == 0 else {
            throw .configurationInvalid(path: file.path, line: 0,
                                        reason: "the password file can be read by others: run `chmod 600 \(file.path)`")
        }
        guard info.st_uid == getuid() else {
            throw .configurationInvalid(path: file.path, line: 0, reason: "the password file belongs to another user")
        }
        guard let data = FileManager.default.contents(atPath: file.path), data.count <= 4096,
              let text = String(data: data, encoding: .utf8) else {
            throw .configurationInvalid(path: file.path, line: 0, reason: "the password file cannot be read as UTF-8 text")
        }
        return text.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
    }
}
