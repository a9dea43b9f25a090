import Foundation
import Glibc
import SystemSupport

/// Per thread, the last file URL the fast route (`Coordinator.performSingle`) resolved: its
/// canonical path and the package containing it, so that a thread coordinating the same URL
/// again — the usual loop of reads or writes of one file, with one coordinator or a new one each
/// time — skips `URL.isFileURL` (a `lowercased()` of the scheme), the extraction of the URL's
/// path (a new string) and the canonical-path cache's hashing and lock.
///
/// **Same answer as the caches.** An entry is used only when the URL's string has the same bytes
/// as the one resolved (no base URL; canonically equivalent but different bytes do not match, as
/// in `PathCache`), for the same runtime's caches and package registry, and while neither's
/// `ResolutionGeneration` has moved: every drop of resolved paths (a coordinated move or deletion
/// of a folder, a cache emptied at its limit) and every change of the package extensions moves
/// one, so the memo never answers what the caches would no longer answer.
/// Only URLs whose string starts `file:///` are remembered (absolute, no host: the path does not
/// depend on the working directory).
///
/// `@unchecked Sendable`: the only stored property is the immutable key; each thread's entry is
/// reached only by that thread (released when the thread exits).
final class ResolvedURLMemo: @unchecked Sendable {
    /// One remembered resolution (immutable: replaced, never changed).
    private final class Entry {
        let caches: PathCaches
        let packages: PackageExtensions
        let generation: Generations
        let urlString: String
        let itemPath: String
        let package: String?

        init(caches: PathCaches, packages: PackageExtensions, generation: Generations, urlString: String,
             itemPath: String, package: String?) {
            self.caches = caches
            self.packages = packages
            self.generation = generation
            self.urlString = urlString
            self.itemPath = itemPath
            self.package = package
        }
    }

    /// The generations of a runtime's caches and package registry, read together.
    struct Generations: Equatable {
        var paths: UInt64
        var packages: UInt64

        @inline(__always)
        init(caches: PathCaches, packages: PackageExtensions) {
            paths = caches.generation.value
            self.packages = packages.generation.value
        }
    }

    private let key: pthread_key_t

    static let shared = ResolvedURLMemo()

    private init() {
        var key = pthread_key_t()
        pthread_key_create(&key) { pointer in
            if let pointer { Unmanaged<AnyObject>.fromOpaque(pointer).release() }
        }
        self.key = key
    }

    /// The remembered canonical path of `url` and the package containing it, or nil.
    @inline(__always)
    func lookup(_ url: URL, caches: PathCaches, packages: PackageExtensions) -> (itemPath: String, package: String?)? {
        guard let raw = pthread_getspecific(key) else { return nil }
        let entry = Unmanaged<Entry>.fromOpaque(raw).takeUnretainedValue()
        guard entry.caches === caches, entry.packages === packages,
              entry.generation == Generations(caches: caches, packages: packages),
              url.baseURL == nil, PathBytes.haveSameBytes(entry.urlString, url.relativeString) else { return nil }
        return (entry.itemPath, entry.package)
    }

    /// Remembers the resolution of `url`, made with the caches at `generation` (read *before*
    /// resolving: a drop during the resolution makes the entry stale at once).
    func store(_ url: URL, caches: PathCaches, packages: PackageExtensions, generation: Generations,
               itemPath: String, package: String?) {
        guard url.baseURL == nil else { return }
        let urlString = url.relativeString
        guard urlString.utf8.starts(with: Self.absoluteFilePrefix) else { return }
        let entry = Entry(caches: caches, packages: packages, generation: generation, urlString: urlString,
                          itemPath: itemPath, package: package)
        let old = pthread_getspecific(key)
        pthread_setspecific(key, Unmanaged.passRetained(entry).toOpaque())
        if let old { Unmanaged<Entry>.fromOpaque(old).release() }
    }

    private static let absoluteFilePrefix = Array("file:///".utf8)
}
