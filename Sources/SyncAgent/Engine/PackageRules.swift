import Foundation

/// Which folders are **package documents**, synced as one unit: a folder whose name ends in one
/// of ``extensions`` (compared without case, as `Coordinator.registerPackageExtension(_:)` does),
/// the outermost one when packages nest. Any thread; a value.
struct PackageRules: Sendable, Hashable {
    /// Lowercased extensions without the dot (`pages`, `album`).
    let extensions: Set<String>

    init(_ extensions: some Sequence<String>) {
        self.extensions = Set(extensions.map { ($0.hasPrefix(".") ? String($0.dropFirst()) : $0).lowercased() }.filter { !$0.isEmpty })
    }

    /// Whether a folder named `name` is a package.
    func isPackageName(_ name: some StringProtocol) -> Bool {
        guard !extensions.isEmpty, let dot = name.lastIndex(of: "."), dot != name.startIndex else { return false }
        return extensions.contains(name[name.index(after: dot)...].lowercased())
    }

    /// The outermost package folder path that `path` is inside of or is (`nil`: none). A
    /// candidate only: the caller checks the item there is a folder.
    func outermostPackage(containing path: String) -> String? {
        guard !extensions.isEmpty else { return nil }
        var prefix = ""
        for component in path.split(separator: "/") {
            prefix = prefix.isEmpty ? String(component) : prefix + "/" + component
            if isPackageName(component) { return prefix }
        }
        return nil
    }
}

/// What makes up a package's fingerprint and tag: a fold of every inner item, so that any change
/// inside (an edit, a new or removed file, a rename) changes it, and the same tree gives the same
/// value on every pass. Any thread.
enum PackageFingerprint {
    /// The local fingerprint of a package: its folder's inode, the total size, the latest
    /// modification time, and — in ``LocalFingerprint/changedNanoseconds`` — a 64-bit hash of
    /// every inner item's relative path, kind and fingerprint. `inner` holds paths relative to
    /// the package.
    static func local(folderInode: UInt64, inner: [(relative: String, item: LocalItem)]) -> LocalFingerprint {
        var hasher = FNV1a()
        var size: Int64 = 0
        var latest: Int64 = 0
        for (relative, item) in inner.sorted(by: { $0.relative < $1.relative }) {
            let print = item.fingerprint
            hasher.add(relative)
            hasher.add(item.isFolder ? "D" : "F")
            if !item.isFolder {
                size += print.size
                latest = max(latest, print.modifiedNanoseconds)
                hasher.add(print.size, print.modifiedNanoseconds, Int64(bitPattern: print.inode), print.changedNanoseconds)
            }
        }
        return LocalFingerprint(size: size, modifiedNanoseconds: latest, inode: folderInode,
                                changedNanoseconds: Int64(bitPattern: hasher.value))
    }

    /// The tag of a package on the server: a hash of every inner item's relative path, kind, tag
    /// and size (`pkg-<hex>`), strong (it is never sent to the server).
    static func remoteTag(inner: [(relative: String, item: RemoteItem)]) -> RemoteTag {
        var hasher = FNV1a()
        for (relative, item) in inner.sorted(by: { $0.relative < $1.relative }) {
            hasher.add(relative)
            hasher.add(item.isFolder ? "D" : "F")
            if !item.isFolder {
                hasher.add(item.tag?.value ?? "-")
                hasher.add(item.size ?? -1)
            }
        }
        return RemoteTag(strong: "\"pkg-\(String(hasher.value, radix: 16))-\(inner.count)\"")
    }

    /// 64-bit FNV-1a, fed with separated fields.
    struct FNV1a {
        private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

        mutating func add(_ text: String) {
            for byte in text.utf8 { mix(byte) }
            mix(0)
        }

        mutating func add(_ numbers: Int64...) {
            for number in numbers {
                var bits = UInt64(bitPattern: number)
                for _ in 0..<8 { mix(UInt8(truncatingIfNeeded: bits)); bits >>= 8 }
            }
        }

        private mutating func mix(_ byte: UInt8) {
            value ^= UInt64(byte)
            value = value &* 0x0000_0100_0000_01b3
        }
    }
}

/// One pass's view with every package folded into one item: the planner sees a package as a
/// single file-like item (never its inner files), whose fingerprint and tag are
/// ``PackageFingerprint``'s. The inner items stay available for the steps.
struct PackageView: Sendable {
    /// The package paths (on either side, or known to the journal as packages).
    var packages: Set<String> = []
    /// Every package's inner local items, relative to the package.
    var localInner: [String: [(relative: String, item: LocalItem)]] = [:]
    /// Every package's inner server items, relative to the package (`nil` when not on the server).
    var remoteInner: [String: [(relative: String, item: RemoteItem)]] = [:]

    /// No packages.
    init() {}

    /// Folds packages in `local`, `remote` and `base` (in place).
    init(rules: PackageRules, local: inout [String: LocalItem]?, remote: inout [String: RemoteItem],
         base: inout [String: JournalEntry]) {
        for (path, entry) in base where entry.isPackage == true { packages.insert(path) }
        guard !rules.extensions.isEmpty || !packages.isEmpty else { return }
        for (path, item) in local ?? [:] where item.isFolder && rules.outermostPackage(containing: path) == path {
            packages.insert(path)
        }
        for (path, item) in remote where item.isFolder && rules.outermostPackage(containing: path) == path {
            packages.insert(path)
        }
        // Nested candidates: only the outermost package counts.
        packages = packages.filter { path in !packages.contains { path.hasPrefix($0 + "/") } }
        guard !packages.isEmpty else { return }
        var localFolders: [String: LocalItem] = [:]
        var remoteFolders: [String: RemoteItem] = [:]
        if var items = local {
            for path in packages { if let item = items[path], item.isFolder { localFolders[path] = item } }
            for (path, item) in items {
                guard let package = Self.package(of: path, in: packages) else { continue }
                items[path] = nil
                if localFolders[package] != nil {
                    localInner[package, default: []].append((String(path.dropFirst(package.count + 1)), item))
                }
            }
            for (path, folder) in localFolders {
                let inner = localInner[path] ?? []
                items[path] = LocalItem(path: path, isFolder: false,
                                        fingerprint: PackageFingerprint.local(folderInode: folder.fingerprint.inode, inner: inner))
            }
            local = items
        }
        for path in packages { if let item = remote[path], item.isFolder { remoteFolders[path] = item } }
        for (path, item) in remote {
            guard let package = Self.package(of: path, in: packages) else { continue }
            remote[path] = nil
            if remoteFolders[package] != nil {
                remoteInner[package, default: []].append((String(path.dropFirst(package.count + 1)), item))
            }
        }
        for (path, folder) in remoteFolders {
            let inner = remoteInner[path] ?? []
            remoteInner[path] = inner
            remote[path] = RemoteItem(path: folder.path, isFolder: false, tag: PackageFingerprint.remoteTag(inner: inner),
                                      size: inner.reduce(0) { $0 + ($1.item.size ?? 0) }, modified: folder.modified,
                                      fileID: folder.fileID)
        }
        for path in packages {
            for key in base.keys where key.hasPrefix(path + "/") { base[key] = nil }
            // A package synced file by file before: compared anew as new on both sides.
            if base[path]?.isFolder == true { base[path] = nil }
        }
    }

    /// The package `path` is strictly inside, if any.
    private static func package(of path: String, in packages: Set<String>) -> String? {
        var prefix = ""
        for component in path.split(separator: "/").dropLast() {
            prefix = prefix.isEmpty ? String(component) : prefix + "/" + component
            if packages.contains(prefix) { return prefix }
        }
        return nil
    }
}
