import Foundation

/// An entity tag as the server gave it, normalised: surrounding quotes kept (`"abc"`), an unquoted
/// PROPFIND value (WsgiDAV) quoted, and whether it was weak (`W/"…"`) recorded apart. A weak tag is
/// never sent in `If-Match` (Apache compares strongly and answers 412).
public struct RemoteTag: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The quoted opaque value, without any `W/` prefix.
    public let value: String
    /// Whether the server marked it weak.
    public let isWeak: Bool

    /// Parses a header or PROPFIND value; `nil` for an empty one, or one holding a control
    /// character (below U+0020, or U+007F: CR or LF would inject header lines into `If-Match`).
    public init?(parsing raw: String) {
        guard !raw.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else { return nil }
        var text = raw.trimmingCharacters(in: .whitespaces)
        var weak = false
        if text.hasPrefix("W/") || text.hasPrefix("w/") { weak = true; text.removeFirst(2) }
        guard !text.isEmpty else { return nil }
        if !(text.hasPrefix("\"") && text.hasSuffix("\"") && text.count >= 2) { text = "\"" + text + "\"" }
        value = text
        isWeak = weak
    }

    /// A strong tag with the quoted `value`.
    public init(strong value: String) {
        self.value = value
        isWeak = false
    }

    public var description: String { isWeak ? "W/" + value : value }
}

/// One file or folder on the server.
public struct RemoteItem: Sendable, Hashable {
    /// Where it is, relative to the store's root.
    public var path: RemotePath
    /// Whether it is a folder (a WebDAV collection).
    public var isFolder: Bool
    /// Its entity tag (`nil` when the server gives none, as nginx dav-ext).
    public var tag: RemoteTag?
    /// Its length in bytes (files; `nil` for folders or when not given).
    public var size: Int64?
    /// Its modification date as the server reports it.
    public var modified: Date?
    /// A server identity that survives renames (`oc:fileid` on Nextcloud/ownCloud), when given.
    public var fileID: String?

    public init(path: RemotePath, isFolder: Bool, tag: RemoteTag?, size: Int64?, modified: Date?, fileID: String? = nil) {
        self.path = path
        self.isFolder = isFolder
        self.tag = tag
        self.size = size
        self.modified = modified
        self.fileID = fileID
    }
}

/// The precondition of a write (`PUT`, `DELETE`, `MOVE`).
public enum RemoteWriteCondition: Sendable, Hashable {
    /// Only when nothing exists at the path (`If-None-Match: *`).
    case mustNotExist
    /// Only when the item's current tag is this strong tag (`If-Match`).
    case mustMatch(RemoteTag)
    /// No condition: used only in the documented safe mode, after a re-check of the item.
    case unconditional
}

/// What a server was seen to honour, found by ``RemoteStore/probe()``.
public struct RemoteCapabilities: Sendable, Hashable, Codable {
    /// `If-Match` / `If-None-Match: *` on writes are honoured (412 when they fail).
    public var honoursConditions: Bool
    /// Tags are strong from the moment of a write (Apache with `FileETag Digest`), not weak for a
    /// second (Apache's default) — weak tags cannot be used for `If-Match`.
    public var strongTagsImmediately: Bool
    /// A rewrite with the same size within the same second changes the tag (WsgiDAV: not).
    public var tagChangesOnEveryWrite: Bool
    /// A folder's tag changes when anything below it changes (Nextcloud/ownCloud), so one
    /// PROPFIND of the root tells whether anything changed.
    public var folderTagsPropagate: Bool
    /// Items carry an identity that survives renames (`oc:fileid`).
    public var hasFileIDs: Bool
    /// `PUT` answers carry the new tag.
    public var tagInWriteResponse: Bool
    /// Listings carry a tag (`getetag`) for files. Without tags nothing on the server can be seen
    /// to change, and the agent refuses the server.
    public var hasTags: Bool

    public init(honoursConditions: Bool, strongTagsImmediately: Bool, tagChangesOnEveryWrite: Bool,
                folderTagsPropagate: Bool, hasFileIDs: Bool, tagInWriteResponse: Bool, hasTags: Bool = true) {
        self.hasTags = hasTags
        self.honoursConditions = honoursConditions
        self.strongTagsImmediately = strongTagsImmediately
        self.tagChangesOnEveryWrite = tagChangesOnEveryWrite
        self.folderTagsPropagate = folderTagsPropagate
        self.hasFileIDs = hasFileIDs
        self.tagInWriteResponse = tagInWriteResponse
    }

    /// Nothing assumed: what a store reports before it was probed.
    public static let unknown = RemoteCapabilities(honoursConditions: false, strongTagsImmediately: false,
                                                   tagChangesOnEveryWrite: false, folderTagsPropagate: false,
                                                   hasFileIDs: false, tagInWriteResponse: false, hasTags: false)

    /// Whether writes can rely on the server alone for "no lost update" (conditions honoured,
    /// tags strong and changed by every write). Otherwise the agent runs in safe mode.
    public var isSafeForConditionalWrites: Bool {
        honoursConditions && strongTagsImmediately && tagChangesOnEveryWrite
    }
}
