import Foundation
import Synchronization

// Test hook: make a chosen step of a save fail with a chosen errno, so that tests can check that
// every failure path cleans up and maps errors correctly without needing a full disk.
//
// Failures are registered per target URL, so tests running in parallel do not disturb each other,
// and each one fires once (then it is removed). When nothing is registered, a check costs one
// relaxed atomic load. Internal: tests reach it with `@testable import CloudDocuments`.

extension SafeSave {
    /// A step of a save where a test can inject a failure.
    enum FailurePoint: Sendable, Hashable, CustomStringConvertible {
        /// Creating the temporary file or folder, or any file or folder inside a temporary package.
        case createTemporary
        /// Each write of a chunk (at most ``SafeSave/chunkSize`` bytes) of any file. An empty file
        /// has no write.
        case write
        /// Setting the owner and permission bits of the temporary file or package folder.
        case setPermissions
        /// The `fsync` of the temporary file, or of any file or folder of a temporary package.
        case fsync
        /// The final rename (or exchange) that puts the new contents in place.
        case rename
        /// The `fsync` of the containing folder, after the new contents are in place.
        case directoryFsync

        var description: String {
            switch self {
            case .createTemporary: return "create temporary"
            case .write: return "write"
            case .setPermissions: return "set permissions"
            case .fsync: return "fsync"
            case .rename: return "rename"
            case .directoryFsync: return "fsync folder"
            }
        }
    }

    private struct InjectedFailure: Sendable {
        var point: FailurePoint
        var code: Int32
        var passesLeft: Int
    }

    /// Registered failures, by target path (see ``injectionKey(_:)``).
    private static let injectedFailures = Locked<[String: [InjectedFailure]]>([:])
    /// How many failures are registered: the fast path checks only this.
    private static let injectedFailureCount = Atomic<Int>(0)

    /// Makes the next save to `url` fail at `point` with `code`, after letting that point pass
    /// `passes` times (so `after: 2` at `.write` fails the third chunk written, which for a package
    /// of small files is the third file). Fires once. Any thread.
    static func injectFailure(at point: FailurePoint, errno code: Int32 = EIO, after passes: Int = 0, forTarget url: URL) {
        let failure = InjectedFailure(point: point, code: code, passesLeft: max(passes, 0))
        injectedFailures.withLock { $0[injectionKey(url), default: []].append(failure) }
        injectedFailureCount.add(1, ordering: .sequentiallyConsistent)
    }

    /// Removes the failures registered for `url` that have not fired. Any thread.
    static func removeInjectedFailures(forTarget url: URL) {
        let removed = injectedFailures.withLock { $0.removeValue(forKey: injectionKey(url))?.count ?? 0 }
        if removed > 0 { injectedFailureCount.subtract(removed, ordering: .sequentiallyConsistent) }
    }

    /// Whether any failure is registered (a relaxed load). A save that starts while none is
    /// registered has none fired at it. Any thread.
    static var failuresAreInjected: Bool { injectedFailureCount.load(ordering: .relaxed) != 0 }

    /// The key under which failures for a target are registered: its standardized path as given
    /// by the caller (before any symbolic link is resolved).
    static func injectionKey(_ url: URL) -> String { url.standardizedFileURL.path }

    /// Throws the injected failure registered for `key` at `point`, if any. `path` is the file
    /// the step applies to, for the error message.
    @inline(__always)
    static func checkInjectedFailure(_ point: FailurePoint, key: String, path: String) throws(SystemCallError) {
        guard injectedFailureCount.load(ordering: .relaxed) != 0 else { return }
        try fireInjectedFailure(point, key: key, path: path)
    }

    private static func fireInjectedFailure(_ point: FailurePoint, key: String, path: String) throws(SystemCallError) {
        let code: Int32? = injectedFailures.withLock { table in
            guard var list = table[key], let index = list.firstIndex(where: { $0.point == point }) else { return nil }
            if list[index].passesLeft > 0 {
                list[index].passesLeft -= 1
                table[key] = list
                return nil
            }
            let code = list[index].code
            list.remove(at: index)
            table[key] = list.isEmpty ? nil : list
            return code
        }
        guard let code else { return }
        injectedFailureCount.subtract(1, ordering: .sequentiallyConsistent)
        throw SystemCallError(call: "\(point) (injected)", path: path, code: code)
    }
}
