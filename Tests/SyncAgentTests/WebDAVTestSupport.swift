import Foundation
import SyncAgent
import TestSupport

/// Shared pieces of the WebDAV tests: a store for a server the test started, local files.
enum WebDAVTesting {
    /// A store on `url` (loopback http is allowed without opting in).
    static func store(_ url: URL, timeout: TimeInterval = 60, maximumResponseBytes: Int = WebDAVConfiguration.defaultMaximumResponseBytes,
                      user: String? = nil, password: String? = nil) throws -> WebDAVStore {
        try WebDAVStore(configuration: WebDAVConfiguration(baseURL: url, user: user, password: password, requestTimeout: timeout,
                                                           maximumResponseBytes: maximumResponseBytes))
    }

    static func path(_ text: String) throws -> RemotePath {
        guard let path = RemotePath(text) else { throw FixtureFailure(description: "not a valid remote path: \(text)") }
        return path
    }

    /// Writes `text` to a new file `name` in `folder`.
    static func file(_ folder: URL, _ name: String, _ text: String) throws -> URL {
        let url = folder.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url
    }

    static func text(_ url: URL) -> String? { (try? Data(contentsOf: url)).map { String(decoding: $0, as: UTF8.self) } }

    /// Uploads `text` to `path`, creating it.
    @discardableResult
    static func put(_ store: WebDAVStore, _ text: String, at path: RemotePath, in scratch: Scratch,
                    condition: RemoteWriteCondition) async throws -> RemoteTag? {
        let source = try file(scratch.url, UUID().uuidString, text)
        return try await store.upload(source, to: path, condition: condition, progress: { _, _ in })
    }

    /// Downloads `path` and returns its text.
    static func get(_ store: WebDAVStore, _ path: RemotePath, in scratch: Scratch) async throws -> String? {
        let destination = scratch.url.appendingPathComponent(UUID().uuidString)
        _ = try await store.download(path, to: destination, progress: { _, _ in })
        return text(destination)
    }

    /// The error a call threw, or `nil` when it succeeded.
    /// (An error of another type becomes `.transport` with its description, so that it fails the comparison.)
    static func error<T>(_ body: () async throws -> T) async -> RemoteStoreError? {
        do {
            _ = try await body()
            return nil
        } catch let error as RemoteStoreError {
            return error
        } catch {
            return .transport("not a RemoteStoreError: \(error)")
        }
    }
}
