import Foundation
import FileCoordination

/// The ubiquity "account" of this process: which containers exist and where.
///
/// `UbiquityAccount.shared` reads `UbiquityConfiguration` from the process environment and the
/// configuration file, and reads them again whenever they change (one `stat` and a look at the
/// environment per call), so an edited configuration — or a changed `CLOUDDOCUMENTS_UBIQUITY_*`
/// variable — takes effect without restarting, whatever used the account first. Tests and servers
/// that want their own make one with `init(configuration:)` or `init(environment:)`.
///
/// Thread safety: every member may be called from any thread or task.
public final class UbiquityAccount: Sendable {
    /// The process's account, configured by the process environment (as it is at each use, not as
    /// it was at the first) and the configuration file.
    public static let shared = UbiquityAccount(source: .processEnvironment)

    private enum Source: Sendable {
        case fixed(UbiquityConfiguration)
        case environment([String: String])
        /// The process environment, read at each use (`shared`).
        case processEnvironment
    }
    private let source: Source
    private let cache = Locked<CachedConfiguration?>(nil)
    /// The plugged-in provider, detected sync tools and identity watching (Providers/, Containers/UbiquityIdentity*).
    let extras = AccountExtras()

    private struct CachedConfiguration: Sendable {
        var stamp: FileStamp?
        /// The values of `configurationVariables` the configuration was loaded with.
        var variables: [String?]
        var result: Result<UbiquityConfiguration, UbiquityError>
    }

    /// The environment variables `UbiquityConfiguration.load(environment:)` reads: a change of
    /// any of them (or of the file) loads the configuration again.
    private static let configurationVariables = [
        UbiquityConfiguration.EnvironmentKey.configFile, UbiquityConfiguration.EnvironmentKey.root,
        UbiquityConfiguration.EnvironmentKey.containers, UbiquityConfiguration.EnvironmentKey.provider,
        UbiquityConfiguration.EnvironmentKey.localDocuments, "HOME", "XDG_CONFIG_HOME",
    ]

    private init(source: Source) {
        self.source = source
    }

    /// An account with a fixed configuration (for tests, servers and tools).
    public convenience init(configuration: UbiquityConfiguration) {
        self.init(source: .fixed(configuration))
    }

    /// An account that reads its configuration from `environment` and the file it names.
    public convenience init(environment: [String: String]) {
        self.init(source: .environment(environment))
    }

    /// The environment this account reads its configuration from (nil for a fixed
    /// configuration, which never changes): what the identity watcher watches. For `shared`, the
    /// process environment as it is now.
    var configurationEnvironment: [String: String]? {
        switch source {
        case .fixed: return nil
        case .environment(let environment): return environment
        case .processEnvironment: return ProcessInfo.processInfo.environment
        }
    }

    /// The current configuration.
    ///
    /// - Throws: `UbiquityError.configurationInvalid` or `.configurationUnreadable` when the
    ///   configuration file or an environment override cannot be used.
    public func configuration() throws(UbiquityError) -> UbiquityConfiguration {
        let environment: [String: String]
        switch source {
        case .fixed(let configuration): return configuration
        case .environment(let given): environment = given
        case .processEnvironment: environment = ProcessInfo.processInfo.environment
        }
        let variables = Self.configurationVariables.map { environment[$0] }
        let stamp = FileStamp(of: UbiquityConfiguration.configurationFileURL(environment: environment))
        if let cached = cache.withLock({ $0 }), cached.stamp == stamp, cached.variables == variables {
            return try cached.result.get()
        }
        let result = Result { () throws(UbiquityError) in try UbiquityConfiguration.load(environment: environment) }
        cache.withLock { $0 = CachedConfiguration(stamp: stamp, variables: variables, result: result) }
        return try result.get()
    }

    /// The container for `identifier` (`nil`: the first configured identifier), creating its
    /// folder and its `Documents` folder when missing, as Apple's call does on first use.
    ///
    /// - Throws: `.notSignedIn` with no root configured, `.noContainerIdentifier` when
    ///   `identifier` is nil and none is configured, `.containerUnavailable` when the folders
    ///   cannot be made, and the configuration's errors.
    public func container(identifier: String? = nil) throws(UbiquityError) -> UbiquityContainer {
        let configuration = try configuration()
        guard let root = configuration.root else { throw .notSignedIn }
        guard let identifier = identifier ?? configuration.containerIdentifiers.first else { throw .noContainerIdentifier }
        guard UbiquityConfiguration.isValidIdentifier(identifier) else {
            throw .containerUnavailable(identifier: identifier, path: root.path, reason: "it is not a valid container identifier")
        }
        let container = UbiquityContainer(identifier: identifier, url: root.appending(path: identifier, directoryHint: .isDirectory))
        // Evicted items of the agent's containers download when a coordinated read needs them.
        if configuration.provider == .agent { FilesOnDemand.enable(root: root) }
        do {
            try FileManager.default.createDirectory(at: container.documentsURL, withIntermediateDirectories: true)
        } catch {
            throw .containerUnavailable(identifier: identifier, path: container.url.path, reason: error.localizedDescription)
        }
        return container
    }

    /// Apple's `FileManager.url(forUbiquityContainerIdentifier:)`: the container folder for
    /// `identifier` (`nil`: the first configured), or `nil` when signed out, when no identifier
    /// is known, or when the folder cannot be made. Use `container(identifier:)` for the reason.
    public func url(forUbiquityContainerIdentifier identifier: String?) -> URL? {
        try? container(identifier: identifier).url
    }

    /// The containers whose identifiers are configured (folders created when missing; ones that
    /// cannot be made are left out). Empty when signed out.
    public func configuredContainers() -> [UbiquityContainer] {
        guard let configuration = try? configuration() else { return [] }
        return configuration.containerIdentifiers.compactMap { try? container(identifier: $0) }
    }
}

/// Enough of a file's identity and change time to tell that it changed (or appeared, or went).
struct FileStamp: Sendable, Hashable {
    let device: UInt64, inode: UInt64, size: Int64, modifiedSeconds: Int, modifiedNanoseconds: Int

    init?(of url: URL) {
        var info = stat()
        guard stat(url.path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev); inode = UInt64(info.st_ino); size = Int64(info.st_size)
        modifiedSeconds = info.st_mtim.tv_sec; modifiedNanoseconds = info.st_mtim.tv_nsec
    }
}
