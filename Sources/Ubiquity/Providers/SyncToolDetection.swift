import Foundation
import CloudDocuments
import FileCoordination
import SystemSupport

/// A sync tool that may keep a container folder in sync, as recognised from its marker files.
public enum ExternalSyncTool: String, Sendable, Hashable, CaseIterable {
    case syncthing, nextcloud, dropbox, rclone

    /// The tool's name as its users write it.
    public var displayName: String {
        switch self {
        case .syncthing: "Syncthing"
        case .nextcloud: "Nextcloud"
        case .dropbox: "Dropbox"
        case .rclone: "rclone"
        }
    }
}

/// Finds which sync tool keeps a folder in sync, from the marker files the tools leave at the
/// root of the folders they sync. The folder itself and every folder above it are looked at:
///
/// | tool | marker |
/// |---|---|
/// | Syncthing | `.stfolder` |
/// | Nextcloud / ownCloud | `.sync_*.db`, `._sync_*.db`, `.csync_journal.db` |
/// | Dropbox | `.dropbox` (or `.dropbox.cache`) |
/// | rclone bisync | `RCLONE_TEST` (the `--check-access` file), or a bisync listing naming the folder in rclone's work folder (`$XDG_CACHE_HOME/rclone/bisync`, else `~/.cache/rclone/bisync`) |
///
/// Best effort: a tool that leaves no marker (rclone `sync` run by hand, a tool syncing a folder
/// above from another machine) is not found, and the provider then says "an external sync tool".
/// The first folder (innermost) with a marker wins. Any thread; reads directories, no caching
/// here (``UbiquityAccount`` caches per container).
public enum SyncToolDetection {
    /// The tool syncing `folder` and the folder holding its marker, or nil.
    public static func detect(syncing folder: URL, environment: [String: String] = ProcessInfo.processInfo.environment)
        -> (tool: ExternalSyncTool, root: URL)? {
        var current = URL(fileURLWithPath: PathBytes.path(of: folder.standardizedFileURL), isDirectory: true)
        while true {
            if let tool = tool(markedIn: PathBytes.path(of: current)) { return (tool, current) }
            if let tool = rcloneListing(naming: PathBytes.path(of: current), environment: environment) { return (tool, current) }
            let parent = current.deletingLastPathComponent()
            if parent.path == current.path || current.path == "/" { return nil }
            current = parent
        }
    }

    /// The tool whose marker is directly inside `path`, or nil.
    static func tool(markedIn path: String) -> ExternalSyncTool? {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return nil }
        for name in names {
            if name == "RCLONE_TEST" { return .rclone }
            guard let item = SyncInternalItems.item(named: name), item.kind == .toolMetadata else { continue }
            switch item.owner {
            case .syncthing where name == ".stfolder": return .syncthing
            case .nextcloud: return .nextcloud
            case .dropbox: return .dropbox
            default: continue
            }
        }
        return nil
    }

    /// `.rclone` when rclone bisync's work folder holds a listing whose name contains `path`
    /// (bisync names its listings after both paths, `/` written as `_`).
    static func rcloneListing(naming path: String, environment: [String: String]) -> ExternalSyncTool? {
        guard path != "/" else { return nil }
        let cache: String
        if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") {
            cache = xdg
        } else if let home = environment["HOME"], home.hasPrefix("/") {
            cache = home + "/.cache"
        } else {
            return nil
        }
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: cache + "/rclone/bisync") else { return nil }
        let trimmed = path.hasSuffix("/") ? String(path.dropLast()) : path
        let mangled = String(trimmed.dropFirst()).replacingOccurrences(of: "/", with: "_")
        let pattern = mangled + ".."
        let tail = ".." + mangled + "."
        return names.contains { $0.hasSuffix(".lst") && ($0.hasPrefix(pattern) || $0.contains(tail) || $0.contains("_" + pattern)) } ? .rclone : nil
    }
}
