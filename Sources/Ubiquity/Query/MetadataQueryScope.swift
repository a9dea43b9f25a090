import Foundation
import FileCoordination
import SystemSupport

/// Where a `MetadataQuery` looks (Apple's search scopes).
public enum MetadataQueryScope: Sendable, Hashable {
    /// The `Documents` folder of every configured container (Apple's
    /// `NSMetadataQueryUbiquitousDocumentsScope`).
    case ubiquitousDocuments
    /// Everything in every configured container except its `Documents` folder (Apple's
    /// `NSMetadataQueryUbiquitousDataScope`).
    case ubiquitousData
    /// Any folder and everything under it (a file URL; any other URL stands for nothing).
    case folder(URL)
}

/// One folder tree to walk and watch: a resolved scope.
struct ScopeRoot: Sendable, Hashable {
    /// The folder (a lossless path string, no trailing `/`).
    var path: String
    /// Folders under `path` that belong to another scope (the data scope leaves `Documents` out).
    var excluded: Set<String>
    /// Whether items under it are in a ubiquity container.
    var isUbiquitous: Bool

    /// The folders `scopes` stand for with `account`'s containers (duplicates and folders inside
    /// another root merged). A ubiquitous scope while signed out stands for nothing.
    static func resolve(_ scopes: [MetadataQueryScope], account: UbiquityAccount) -> [ScopeRoot] {
        var roots: [ScopeRoot] = []
        let needsContainers = scopes.contains { if case .folder = $0 { return false } else { return true } }
        let containers = needsContainers ? account.configuredContainers() : []
        for scope in scopes {
            switch scope {
            case .ubiquitousDocuments:
                for container in containers {
                    roots.append(ScopeRoot(path: clean(container.documentsURL), excluded: [], isUbiquitous: true))
                }
            case .ubiquitousData:
                for container in containers {
                    roots.append(ScopeRoot(path: clean(container.url), excluded: [clean(container.documentsURL)], isUbiquitous: true))
                }
            case .folder(let url):
                guard url.isFileURL else { continue }
                let path = clean(url)
                roots.append(ScopeRoot(path: path, excluded: [], isUbiquitous: account.containerOfItem(at: url) != nil))
            }
        }
        return merge(roots)
    }

    /// Whether `path` (a folder under this root, or the root) is walked.
    func includes(folder path: String) -> Bool {
        !excluded.contains { $0 == path || CanonicalPathSupport.isInside(path, $0) }
    }

    static func clean(_ url: URL) -> String {
        var path = PathBytes.path(of: url.standardizedFileURL)
        if case .success(let real) = PathBytes.realPath(path) { path = real }
        while path.count > 1, path.hasSuffix("/") { path.removeLast() }
        return path
    }

    /// Roots inside another root are dropped, and the exclusions of two equal roots intersected.
    private static func merge(_ roots: [ScopeRoot]) -> [ScopeRoot] {
        var merged: [ScopeRoot] = []
        for root in roots.sorted(by: { $0.path.utf8.count < $1.path.utf8.count }) {
            if let index = merged.firstIndex(where: { $0.path == root.path }) {
                merged[index].excluded.formIntersection(root.excluded)
                merged[index].isUbiquitous = merged[index].isUbiquitous || root.isUbiquitous
            } else if let outer = merged.firstIndex(where: { CanonicalPathSupport.isInside(root.path, $0.path) }) {
                // Inside another root: walked with it, unless that root excludes it.
                merged[outer].excluded.remove(root.path)
            } else {
                merged.append(root)
            }
        }
        return merged
    }
}

/// Path prefix tests on lossless path strings.
enum CanonicalPathSupport {
    /// Whether `path` is strictly inside the folder `folder`.
    static func isInside(_ path: String, _ folder: String) -> Bool {
        let folderBytes = folder.utf8, pathBytes = path.utf8
        guard pathBytes.count > folderBytes.count + (folder == "/" ? 0 : 1), pathBytes.starts(with: folderBytes) else { return false }
        if folder == "/" { return true }
        return pathBytes[pathBytes.index(pathBytes.startIndex, offsetBy: folderBytes.count)] == UInt8(ascii: "/")
    }
}
