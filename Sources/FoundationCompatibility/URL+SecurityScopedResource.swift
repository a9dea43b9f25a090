import Foundation
internal import FileCoordination

// Apple's security-scoped URLs (the App Sandbox: a URL from a document picker, a drop, or a
// bookmark resolved `.withSecurityScope`, must be "started" before its file is touched). Code
// written for Apple platforms brackets file access with these two calls; swift-corelibs-foundation
// has neither. On Linux there is no sandbox and no URL carries a security scope: a process may use
// every file its user's permissions allow, so there is nothing to start or stop.

extension URL {
    /// Makes the resource this URL points to accessible: Apple's security-scoped access, for Linux.
    ///
    /// Linux has no App Sandbox, so no URL carries a security scope and nothing has to be
    /// granted: access to the file is decided by its permissions alone, as it is for every other
    /// file. The call therefore returns `true` for a file URL — the request succeeded, the file
    /// may be used — and `false` for any other URL (a web URL has no security scope on Apple
    /// platforms either). Returning `true` keeps the usual Apple-platform patterns working
    /// unchanged: `guard url.startAccessingSecurityScopedResource() else { … }` takes the
    /// success path, and `let scoped = url.startAccessing…(); defer { if scoped { url.stop…() } }`
    /// stops what it started. (On Apple platforms the same call returns `false` for a URL that
    /// is not security-scoped; code that treats `false` as "no scope, go ahead" works either way.)
    ///
    /// As on Apple platforms, balance every call that returned `true` with one call of
    /// ``stopAccessingSecurityScopedResource()``: the calls are counted per file (by its
    /// standardized path), process-wide. Nothing else happens; the count exists so that an
    /// unbalanced `stop` is harmless (it does nothing) and so that tests can check the balance
    /// (`securityScopedAccessCount`). Thread-safe; never blocks for long (one short lock); never
    /// throws.
    public func startAccessingSecurityScopedResource() -> Bool {
        guard isFileURL else { return false }
        SecurityScopedAccess.start(standardizedFileURL.path)
        return true
    }

    /// Relinquishes access granted by ``startAccessingSecurityScopedResource()``: Apple's call, for
    /// Linux, where it only counts the balance down (there is no sandbox to tell). A call without
    /// a matching start, or on a URL that is not a file URL, does nothing. Thread-safe.
    public func stopAccessingSecurityScopedResource() {
        guard isFileURL else { return }
        SecurityScopedAccess.stop(standardizedFileURL.path)
    }

    /// How many calls of ``startAccessingSecurityScopedResource()`` on this file (by its
    /// standardized path) are not balanced by ``stopAccessingSecurityScopedResource()`` yet, in
    /// this process. Not Apple API: for tests that check an app's balance.
    package var securityScopedAccessCount: Int {
        isFileURL ? SecurityScopedAccess.count(standardizedFileURL.path) : 0
    }
}

extension NSURL {
    /// `NSURL`'s form of `URL.startAccessingSecurityScopedResource()` (the same count): `true` for
    /// a file URL, `false` otherwise.
    public func startAccessingSecurityScopedResource() -> Bool {
        (self as URL).startAccessingSecurityScopedResource()
    }

    /// `NSURL`'s form of `URL.stopAccessingSecurityScopedResource()`.
    public func stopAccessingSecurityScopedResource() {
        (self as URL).stopAccessingSecurityScopedResource()
    }
}

/// The process-wide count of started, not yet stopped, security-scoped accesses, by path. An entry
/// is removed when its count reaches zero, so the table holds only files in use.
enum SecurityScopedAccess {
    private static let counts = Locked<[String: Int]>([:])

    static func start(_ path: String) {
        counts.withLock { $0[path, default: 0] += 1 }
    }

    static func stop(_ path: String) {
        counts.withLock { counts in
            guard let count = counts[path] else { return }
            counts[path] = count > 1 ? count - 1 : nil
        }
    }

    static func count(_ path: String) -> Int {
        counts.withLock { $0[path] ?? 0 }
    }
}
