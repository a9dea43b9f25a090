import Foundation
import Glibc
import CloudDocuments
import FileCoordination
import SystemSupport

/// One result of a `MetadataQuery`: a file or folder under a search scope, as it was when the
/// query last reported it. A value: it does not change when the file does — the query reports a
/// newer value (with the same ``id``) in its next update.
///
/// Small on purpose (80 bytes plus the name when it is longer than 15 bytes of UTF-8; the folder
/// path is shared by every item of the folder): a query may hold hundreds of thousands.
public struct MetadataItem: Sendable, Hashable, Identifiable {
    /// Stable for as long as the query runs: the item keeps its identifier when it changes or is
    /// renamed or moved inside the scope. Not stable across queries or processes.
    public internal(set) var id: UInt64
    /// The folder holding the item (a lossless path string, see `PathBytes`; no trailing `/`).
    public internal(set) var folderPath: String
    /// The file name (a lossless path string).
    public internal(set) var name: String
    /// The size in bytes (0 for a folder).
    public internal(set) var size: Int64
    /// The modification time, in nanoseconds since 1970.
    var modifiedNanoseconds: Int64
    /// The birth time, in nanoseconds since 1970, or `Int64.min` when the file system keeps none.
    var createdNanoseconds: Int64
    /// The inode: a file replaced by another (a safe save) is a change even with equal size and time.
    var inode: UInt64
    var flags: Flags
    /// What the sync agent is doing with the item (from its status; none for other providers).
    var transfer = ItemTransferState.none

    struct Flags: OptionSet, Hashable, Sendable {
        let rawValue: UInt8
        static let folder = Flags(rawValue: 1)
        static let ubiquitous = Flags(rawValue: 2)
        static let conflicts = Flags(rawValue: 4)
        /// Only a placeholder is here (``ItemPlaceholder``): size and dates are the evicted item's.
        static let evicted = Flags(rawValue: 8)
    }

    init(id: UInt64, folderPath: String, name: String, stamp: ItemStamp, flags: Flags) {
        self.id = id
        self.folderPath = folderPath
        self.name = name
        self.size = stamp.isFolder ? 0 : stamp.size
        self.modifiedNanoseconds = stamp.modified
        self.createdNanoseconds = stamp.created
        self.inode = stamp.inode
        self.flags = flags
        if stamp.isFolder { self.flags.insert(.folder) }
        if stamp.isEvicted { self.flags.insert(.evicted) }
    }

    /// The absolute path (a lossless path string).
    public var path: String { SyncFolderListing.join(folderPath, name) }
    /// The file URL.
    public var url: URL { PathBytes.fileURL(path, isDirectory: isFolder) }
    /// The name without its extension (Apple's display name; extensions are never hidden here).
    public var displayName: String {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return PathBytes.display(name) }
        return PathBytes.display(String(name[..<dot]))
    }
    /// Whether the item is a folder.
    public var isFolder: Bool { flags.contains(.folder) }
    /// Whether the item is inside a ubiquity container.
    public var isUbiquitous: Bool { flags.contains(.ubiquitous) }
    /// Whether only the item's placeholder is on this machine (it was evicted; the provider
    /// downloads it on request, or when a coordinated read opens it). Its size and dates are the
    /// evicted item's, from the placeholder.
    public var isEvicted: Bool { flags.contains(.evicted) }
    /// Whether conflict copies of the item made by a sync tool are beside it (they are not results
    /// themselves; resolving a conflict version deletes its copy).
    public var hasUnresolvedConflicts: Bool { flags.contains(.conflicts) }
    /// When the contents last changed.
    public var contentChangeDate: Date { Self.date(modifiedNanoseconds) }
    /// When the item was created, or `nil` when the file system does not keep birth times.
    public var creationDate: Date? { createdNanoseconds == .min ? nil : Self.date(createdNanoseconds) }

    /// The item's place in the cloud. Inside a container, what the providers without transfers
    /// (`none`, and `external` while no temporary file of the tool is beside the item) report:
    /// downloaded and current (100 %), uploaded (100 %), not transferring, plus the conflict flag;
    /// an evicted item is not downloaded (0 %) and uploaded.
    /// The query does not ask the container's provider (``UbiquityAccount/status(ofItemAt:)`` does).
    public var ubiquitousStatus: UbiquitousItemStatus {
        var status: UbiquitousItemStatus
        if isUbiquitous, isEvicted {
            status = UbiquitousItemStatus(isUbiquitous: true, downloadingStatus: .notDownloaded, percentDownloaded: 0,
                                          percentUploaded: 100, hasUnresolvedConflicts: hasUnresolvedConflicts)
        } else {
            status = UbiquitousItemStatus(isUbiquitous: isUbiquitous, percentDownloaded: isUbiquitous ? 100 : nil,
                                          percentUploaded: isUbiquitous ? 100 : nil, hasUnresolvedConflicts: hasUnresolvedConflicts)
        }
        guard isUbiquitous else { return status }
        let percent = Double(transfer.percent)
        switch transfer.kind {
        case .none: break
        case .waitingToUpload:
            status.isUploaded = false
            status.percentUploaded = 0
        case .uploading:
            status.isUploaded = false
            status.isUploading = true
            status.percentUploaded = percent
        case .waitingToDownload:
            // A newer version waits on the server: what is here (if anything) is not current.
            if !isEvicted { status.downloadingStatus = .downloaded }
        case .downloading:
            status.isDownloading = true
            status.percentDownloaded = percent
            if !isEvicted { status.downloadingStatus = .downloaded }
        }
        return status
    }

    /// The value of `attribute`, typed as Apple's `NSMetadataItem.value(forAttribute:)` returns it
    /// (`String`, `URL`, `Int`, `Date`, `Bool`, `Double`), or `nil` when the item has none (the
    /// ubiquitous attributes of an item outside every container, the size of a folder).
    public func value(of attribute: MetadataItemAttribute) -> (any Sendable)? {
        switch attribute {
        case .fsName: return PathBytes.display(name)
        case .displayName: return displayName
        case .path: return PathBytes.display(path)
        case .url: return url
        case .fsSize: return isFolder ? nil : Int(size)
        case .fsCreationDate: return creationDate
        case .fsContentChangeDate: return contentChangeDate
        case .contentType: return isFolder ? "public.folder" : "public.data"
        case .isUbiquitous: return isUbiquitous
        default: break
        }
        guard isUbiquitous else { return nil }
        let status = ubiquitousStatus
        switch attribute {
        case .hasUnresolvedConflicts: return status.hasUnresolvedConflicts
        case .downloadingStatus: return status.downloadingStatus.rawValue
        case .isDownloading: return status.isDownloading
        case .isUploaded: return status.isUploaded
        case .isUploading: return status.isUploading
        case .percentDownloaded: return status.percentDownloaded
        case .percentUploaded: return status.percentUploaded
        default: return nil
        }
    }

    /// Whether `other` differs from this item in anything a query reports (not the identifier).
    func differs(from other: MetadataItem) -> Bool {
        folderPath != other.folderPath || !PathBytes.haveSameBytes(name, other.name) || size != other.size
            || modifiedNanoseconds != other.modifiedNanoseconds || inode != other.inode || flags != other.flags
            || transfer != other.transfer
    }

    private static func date(_ nanoseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(nanoseconds) / 1_000_000_000)
    }
}

/// What the walker and the watcher read of one directory entry.
struct ItemStamp: Sendable, Hashable {
    var isFolder: Bool
    var size: Int64
    var modified: Int64
    var created: Int64
    var inode: UInt64
    /// The entry is an evicted item's placeholder: size, dates and folder-ness are the item's
    /// (from ``PlaceholderFacts``), the inode the placeholder's.
    var isEvicted = false
}

extension ItemStamp {
    /// The stamp of the item `name` in `folder` (a lossless path) when only its placeholder is
    /// there, or `nil` when there is no valid placeholder.
    static func evicted(_ name: String, in folder: String) -> ItemStamp? {
        guard let placeholderName = ItemPlaceholder.placeholderName(forItemNamed: name) else { return nil }
        let path = SyncFolderListing.join(folder, placeholderName)
        guard let own = PathBytes.withCString(path, { ItemStatReader.stamp(in: AT_FDCWD, $0) }), !own.isFolder else { return nil }
        return evicted(placeholderAt: path, inode: own.inode)
    }

    /// The stamp of an evicted item from its placeholder file at `path`, whose inode (from the
    /// folder listing) is `inode`; `nil` when it is not a valid placeholder.
    static func evicted(placeholderAt path: String, inode: UInt64) -> ItemStamp? {
        guard let facts = PlaceholderFacts.read(placeholderAt: path) else { return nil }
        return ItemStamp(isFolder: facts.isPackage, size: facts.size, modified: facts.modifiedNanoseconds,
                         created: facts.createdNanoseconds, inode: inode, isEvicted: true)
    }
}

extension MetadataItem {
    /// The item at `url` as a query would report it (identifier 0; has-unresolved-conflicts from
    /// the conflict copies beside it; ubiquitous when inside a container of `account`; evicted
    /// when only its placeholder is there), or nil when nothing is there. Does not follow a final symbolic link. Any thread.
    public static func examine(_ url: URL, account: UbiquityAccount = .shared) -> MetadataItem? {
        guard let (folder, name) = SyncFolderListing.split(PathBytes.path(of: url.standardizedFileURL)),
              let stamp = PathBytes.withCString(SyncFolderListing.join(folder, name), { ItemStatReader.stamp(in: AT_FDCWD, $0) })
                ?? ItemStamp.evicted(name, in: folder)
        else { return nil }
        var flags: Flags = []
        if account.containerOfItem(at: url) != nil { flags.insert(.ubiquitous) }
        // One item: a listing of the folder's names that could be its copies.
        if let candidates = SyncFolderListing.candidateNames(inFolder: folder, forOriginal: name), candidates.count > 1,
           SyncConflictNaming.conflictGroup(of: name, in: candidates).map({ !$0.copies.isEmpty }) == true {
            flags.insert(.conflicts)
        }
        return MetadataItem(id: 0, folderPath: folder, name: name, stamp: stamp, flags: flags)
    }
}
