import CloudDocuments
import Foundation
import SystemSupport

/// What files on demand must remember across a restart of the agent (also a `kill -9`): the
/// evicted items asked for (``downloads``) and the pinned items (``pins``), container-relative
/// paths. Kept in the container's journal folder as `on-demand.json`, a small JSON object
/// replaced whole and durably at every change (``SafeSave``: temporary file, `fsync`, rename,
/// `fsync` of the folder), so a crash leaves the old set or the new one, never a mix.
///
/// A download asked for is forgotten only when its file is in place (and its placeholder
/// removed), or when the server no longer has the item; a restarted agent finds the rest and
/// downloads them again from the start (a killed download's temporary file is removed when the
/// engine starts: never a partial file under the real name).
///
/// A value; its owner (the container's ``SyncEngine`` actor) saves it.
struct OnDemandState: Codable, Sendable, Equatable {
    /// Evicted items the user or an app asked for, not in place yet.
    var downloads: Set<String> = []
    /// Items (files, packages, folders) kept downloaded: an evicted item inside one is
    /// downloaded, and none is ever evicted by the space budget. Evicting one by hand is refused.
    var pins: Set<String> = []

    /// The file's name in the journal folder.
    static let fileName = "on-demand.json"
    /// The largest file read (a bigger or garbled one reads as empty: losing a request only
    /// means asking again).
    static let maximumSize = 8 << 20

    /// The state saved in `folder`, or an empty one when there is none or it cannot be read.
    static func load(from folder: URL) -> OnDemandState {
        let path = folder.appending(path: fileName).path
        guard let data = readSmallRegularFile(atPath: path, limit: maximumSize),
              let state = try? JSONDecoder().decode(OnDemandState.self, from: data) else { return OnDemandState() }
        return state
    }

    /// Saves the state in `folder`, durably. Returns why it could not, or `nil`.
    func save(in folder: URL) -> String? {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(self) else { return "cannot encode the on-demand state" }
        do {
            try SafeSave.write(data, to: folder.appending(path: Self.fileName), creating: false)
            return nil
        } catch {
            return "cannot save the requested downloads and pins: \(error.localizedDescription)"
        }
    }

    /// Whether `path` is pinned, itself or through a folder that holds it.
    func isPinned(_ path: String) -> Bool {
        pins.contains { path == $0 || path.hasPrefix($0 + "/") }
    }

    /// The pin that covers `path` (itself or a folder above), if any.
    func pin(covering path: String) -> String? {
        pins.filter { path == $0 || path.hasPrefix($0 + "/") }.min { $0.count < $1.count }
    }
}
