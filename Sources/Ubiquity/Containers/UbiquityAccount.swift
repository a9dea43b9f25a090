import Foundation
import FileCoordination

/// The ubiquity "account" of this process: which containers exist and where.
///
/// `UbiquityAccount.shared` reads `UbiquityConfiguration` from the environment and the
/// configuration file, and reads the file again whenever it changes (one `stat` per call), so an
/// edited configuration takes effect without restarting. Tests and servers that want their own
/// make one with `init(configuration:)`.
///
/// Thread safety: every member may be called from any thread or task.
public final class UbiquityAccount: Sendable {
    /// The process's account, configured by the environment and the configuration file.
    public static let shared = UbiquityAccount(environment: ProcessInfo.processInfo.environment)

    private enum Source: Sendable {
        case fixed(UbiquityConfiguration)
        case environment([String: String])
    }
    private let source: Source
    private let cache = Locked<CachedConfiguration?>(nil)
    /// The plugged-in provider, detected sync tools and identity watching (Providers/, Containers/UbiquityIdentity*).
    let extras = AccountExtras()

    private struct CachedConfiguration: Sendable {
        var stamp: FileStamp?
        var result: Result<UbiquityConfiguration, UbiquityError>
    }

    /// An account with a fixed configuration (for tests, servers and tools).
    public init(configuration: UbiquityConfiguration) {
        source = .fixed(configuration)
    }

    /// An account that reads its configuration from `environment` and the file it names.
    public init(environment: [String: String]) {
        source = .environment(environment)
    }

    /// The environment this account reads its configuration from (nil for a fixed
    /// configuration, which never changes): what the identity watcher watches.
    var configurationEnvironment: [String: String]? {
        if case .environment(let environment) = source { return environment }
        return nil
    }

    /// The current configuration.
    ///
    /// - Throws: `UbiquityError.configurationInvalid` or `.configurationUnreadable` when the
    ///   configuration file or an environment override cannot be used.
    public func configuration() throws(UbiquityError) -> UbiquityConfiguration {
        switch source {
        case .fixed(let configuration):
            return configuration
        case .environment(let environment):
            let stamp = FileStamp(of: UbiquityConfiguration.configurationFileURL(environment: environment))
            if let cached = cache.withLock({ $0 }), cached.stamp == stamp { return try cached.result.get() }
            let result = Result { () throws(UbiquityError) in try UbiquityConfiguration.load(environment: environment) }
            cache.withLock { $0 = CachedConfiguration(stamp: stamp, result: result) }
            return try result.get()
        }
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
