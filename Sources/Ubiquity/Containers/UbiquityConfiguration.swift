import Foundation

/// Where this user's ubiquity containers live: the answer to "is iCloud signed in, and where?".
///
/// On Apple platforms the system knows the signed-in account. On Linux the "cloud" is a folder
/// that something keeps in sync — a Syncthing, Nextcloud, Dropbox or rclone folder, or this
/// package's sync agent — so the user says where, in **one** place:
///
/// 1. the environment, which overrides the file key by key:
///    `CLOUDDOCUMENTS_UBIQUITY_ROOT` (the root folder; set to the empty string to sign out),
///    `CLOUDDOCUMENTS_UBIQUITY_CONTAINERS` (identifiers, comma-separated, first is the default),
///    `CLOUDDOCUMENTS_UBIQUITY_PROVIDER` (`none`, `external`, `agent`),
///    `CLOUDDOCUMENTS_LOCAL_DOCUMENTS` (the local documents folder);
/// 2. the file `$CLOUDDOCUMENTS_UBIQUITY_CONFIG`, else `$XDG_CONFIG_HOME/clouddocuments/ubiquity.conf`,
///    else `~/.config/clouddocuments/ubiquity.conf`, made of `key = value` lines (`#` starts a
///    comment):
///
///    ```
///    # ~/.config/clouddocuments/ubiquity.conf
///    root = /home/ada/Sync/Apps        # kept in sync by Syncthing
///    provider = external               # none | external | agent
///    container = com.example.notes     # one line per identifier; the first is the default
///    container = com.example.sketches
///    documents = /home/ada/Papers     # the local documents folder (default: the XDG one)
///    ```
///
/// Each container identifier maps to `ROOT/IDENTIFIER/`, with the user-visible documents in
/// `ROOT/IDENTIFIER/Documents/` and everything else in that container being its data scope.
/// With no root configured the user counts as signed out: container URLs are `nil`, as on Apple
/// platforms without an iCloud account.
public struct UbiquityConfiguration: Sendable, Hashable {
    /// The folder that holds one subfolder per container, or `nil` when signed out.
    public var root: URL?
    /// Container identifiers in order of preference; the first answers a `nil` identifier.
    public var containerIdentifiers: [String]
    /// What keeps the containers in sync.
    public var provider: UbiquityProviderKind
    /// The local (not ubiquitous) documents folder, or `nil` for the user's XDG documents folder
    /// (``UbiquityAccount/localDocumentsURL`` resolves it). Not part of the identity: changing it
    /// posts no identity-did-change notification.
    public var localDocuments: URL?
    /// The sync agent's settings (server, user, poll interval, …): read with `provider = agent`,
    /// accepted whatever the provider. Not part of the identity.
    public var agent = AgentSettings()

    /// A configuration made in code (tools, tests, servers); `root == nil` means signed out.
    public init(root: URL?, containerIdentifiers: [String] = [], provider: UbiquityProviderKind = .externalSyncTool,
                localDocuments: URL? = nil) {
        self.root = root
        self.containerIdentifiers = containerIdentifiers
        self.provider = provider
        self.localDocuments = localDocuments
    }

    /// The environment variables that override the configuration file.
    public enum EnvironmentKey {
        /// The configuration file to read instead of the default one.
        public static let configFile = "CLOUDDOCUMENTS_UBIQUITY_CONFIG"
        /// The root folder (overrides `root =`); the empty string signs out.
        public static let root = "CLOUDDOCUMENTS_UBIQUITY_ROOT"
        /// Container identifiers, comma-separated (override the `container =` lines).
        public static let containers = "CLOUDDOCUMENTS_UBIQUITY_CONTAINERS"
        /// `none`, `external` or `agent` (overrides `provider =`).
        public static let provider = "CLOUDDOCUMENTS_UBIQUITY_PROVIDER"
        /// The local documents folder, an absolute path (overrides `documents =`).
        public static let localDocuments = "CLOUDDOCUMENTS_LOCAL_DOCUMENTS"
    }

    /// The configuration file this environment names (it need not exist).
    public static func configurationFileURL(environment: [String: String]) -> URL {
        if let explicit = environment[EnvironmentKey.configFile], !explicit.isEmpty {
            return URL(fileURLWithPath: explicit)
        }
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") {
            return URL(fileURLWithPath: config).appending(path: "clouddocuments/ubiquity.conf")
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return URL(fileURLWithPath: home).appending(path: ".config/clouddocuments/ubiquity.conf")
    }

    /// Reads the configuration file named by `environment` (a missing file is an empty
    /// configuration) and applies the environment's overrides.
    ///
    /// - Throws: `UbiquityError.configurationInvalid` naming the file and line of a line that is
    ///   not `key = value`, an unknown key or provider, or a root or documents folder that is not
    ///   an absolute path or holds a NUL byte;
    ///   `UbiquityError.configurationUnreadable` when the file exists but cannot be read.
    public static func load(environment: [String: String]) throws(UbiquityError) -> UbiquityConfiguration {
        let file = configurationFileURL(environment: environment)
        var configuration = UbiquityConfiguration(root: nil)
        let text: String
        do {
            text = try String(contentsOf: file, encoding: .utf8)
        } catch let error as CocoaError where error.code == .fileReadNoSuchFile {
            text = ""
        } catch {
            throw .configurationUnreadable(path: file.path, reason: "\(error.localizedDescription)")
        }
        configuration = try parse(text, path: file.path)
        try configuration.apply(environment: environment)
        return configuration
    }

    /// Parses the text of a configuration file; `path` only names it in errors.
    public static func parse(_ text: String, path: String) throws(UbiquityError) -> UbiquityConfiguration {
        var configuration = UbiquityConfiguration(root: nil)
        // `\.isNewline`, not "\n": a CRLF line end is one Character, which "\n" does not match.
        for (index, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let line = rawLine.prefix { $0 != "#" }.trimmingCharacters(in: .whitespaces)
            if line.isEmpty { continue }
            let invalid = { (reason: String) in UbiquityError.configurationInvalid(path: path, line: index + 1, reason: reason) }
            guard let equals = line.firstIndex(of: "=") else { throw invalid("expected `key = value`") }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces)
            let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            switch key {
            case "root", "documents":
                let folder = try folderURL(value, key: key).mapError { invalid($0.reason) }.get()
                if key == "root" { configuration.root = folder } else { configuration.localDocuments = folder }
            case "container":
                guard isValidIdentifier(value) else { throw invalid("`\(value)` is not a container identifier (letters, digits, `.`, `-`, `_`; not `.` or `..`)") }
                configuration.containerIdentifiers.append(value)
            case "provider":
                guard let provider = UbiquityProviderKind(configurationValue: value) else {
                    throw invalid("unknown provider `\(value)`; use none, external or agent")
                }
                configuration.provider = provider
            case _ where AgentSettings.keys.contains(key):
                if let reason = configuration.agent.apply(key: key, value: value) { throw invalid(reason) }
            default:
                throw invalid("unknown key `\(key)`; the keys are root, container, provider, documents and the agent's "
                              + AgentSettings.keys.sorted().joined(separator: ", "))
            }
        }
        return configuration
    }

    private mutating func apply(environment: [String: String]) throws(UbiquityError) {
        if let root = environment[EnvironmentKey.root] {
            if root.isEmpty {
                self.root = nil
            } else {
                self.root = try Self.folderURL(root, key: "root").mapError {
                    UbiquityError.configurationInvalid(path: "$" + EnvironmentKey.root, line: 0, reason: $0.reason)
                }.get()
            }
        }
        if let documents = environment[EnvironmentKey.localDocuments], !documents.isEmpty {
            localDocuments = try Self.folderURL(documents, key: "documents").mapError {
                UbiquityError.configurationInvalid(path: "$" + EnvironmentKey.localDocuments, line: 0, reason: $0.reason)
            }.get()
        }
        if let list = environment[EnvironmentKey.containers] {
            let identifiers = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            if let bad = identifiers.first(where: { !Self.isValidIdentifier($0) }) {
                throw .configurationInvalid(path: "$" + EnvironmentKey.containers, line: 0, reason: "`\(bad)` is not a container identifier")
            }
            containerIdentifiers = identifiers
        }
        if let value = environment[EnvironmentKey.provider], !value.isEmpty {
            guard let provider = UbiquityProviderKind(configurationValue: value) else {
                throw .configurationInvalid(path: "$" + EnvironmentKey.provider, line: 0, reason: "unknown provider `\(value)`; use none, external or agent")
            }
            self.provider = provider
        }
        if let server = environment[AgentSettings.serverEnvironmentKey], !server.isEmpty {
            if let reason = agent.apply(key: "server", value: server) {
                throw .configurationInvalid(path: "$" + AgentSettings.serverEnvironmentKey, line: 0, reason: reason)
            }
        }
    }

    /// The folder a `root =` or `documents =` value names, or why it cannot be one: not an
    /// absolute path, or a NUL byte in it (no path can hold one; Foundation would percent-encode
    /// it into a folder named `…%00…`).
    private static func folderURL(_ value: String, key: String) -> Result<URL, InvalidValue> {
        let what = key == "root" ? "the root" : "the documents folder"
        guard !value.unicodeScalars.contains("\u{0}") else { return .failure(InvalidValue("\(what) must not contain a NUL byte")) }
        guard value.hasPrefix("/") else { return .failure(InvalidValue("\(what) must be an absolute path, not `\(value)`")) }
        return .success(URL(fileURLWithPath: value, isDirectory: true).standardizedFileURL)
    }

    /// Why a value cannot be used (the reason of a `configurationInvalid`).
    private struct InvalidValue: Error {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }

    /// The configuration without what does not make the identity (``localDocuments``): what the
    /// identity watcher compares.
    var identityPart: UbiquityConfiguration {
        var part = self
        part.localDocuments = nil
        part.agent = AgentSettings()
        return part
    }

    /// Whether `identifier` can name a container folder: one path component of letters, digits,
    /// `.`, `-` and `_`, at most 255 bytes, not `.` or `..`.
    public static func isValidIdentifier(_ identifier: String) -> Bool {
        guard !identifier.isEmpty, identifier != ".", identifier != "..", identifier.utf8.count <= 255 else { return false }
        return identifier.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "." || $0 == "-" || $0 == "_"
        }
    }
}

/// What keeps a ubiquity container in sync with other devices.
public enum UbiquityProviderKind: String, Sendable, Hashable, CaseIterable {
    /// Nothing: the folder is local only (useful for tests and single-machine setups).
    case none
    /// A sync tool this package does not control (Syncthing, Nextcloud, Dropbox, rclone).
    case externalSyncTool = "external"
    /// This package's sync agent (a later release).
    case agent

    init?(configurationValue: String) {
        self.init(rawValue: configurationValue.lowercased())
    }
}
