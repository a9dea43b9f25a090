import Glibc
import SystemSupport

/// The evicted items' placeholders (`.NAME.clouddocs-placeholder`) in one folder's listing:
/// collected while the walk reads the folder, then their facts read in inode order. Owned by one
/// query's thread; a value.
///
/// Why in inode order: reading an attribute kept inside an ext4 inode reads the inode's block of
/// the inode table (16 inodes to a 4 KiB block), looked up in the block cache at each read; a
/// folder lists its entries in hash order, which hops between those blocks at random, while
/// inode order visits each block's inodes one after the other and the kernel finds the block in
/// its small per-CPU cache of recent ones. Placeholders written one after the other (an eviction
/// of a folder) get neighbouring inodes. It costs a sort of the folder's placeholders.
struct FolderPlaceholders {
    /// The candidates' names, each followed by a NUL, back to back.
    private var names: [UInt8] = []
    /// Each candidate: its inode (from the listing), where its name starts in `names` and its length.
    private var candidates: [(inode: UInt64, offset: Int32, length: Int32)] = []

    var isEmpty: Bool { candidates.isEmpty }

    /// Keeps the hidden name `bytes` (a listing entry, inode `inode`) if it may be a placeholder's.
    mutating func add(_ bytes: Slice<UnsafeRawBufferPointer>, inode: UInt64) {
        guard PlaceholderNameFilter.mayBePlaceholder(bytes), bytes.count < Int(Int32.max) else { return }
        candidates.append((inode, Int32(names.count), Int32(bytes.count)))
        names.append(contentsOf: bytes)
        names.append(0)
    }

    /// The evicted items the candidates stand for, under their real names, with the facts of
    /// their placeholders (read relative to `descriptor`, the open folder at `folder`); a
    /// candidate that is not a valid placeholder (no facts, not a regular file) is left out.
    func read(in descriptor: Int32, folder: String) -> [(name: String, stamp: ItemStamp)] {
        guard !candidates.isEmpty else { return [] }
        let suffixLength = ItemPlaceholder.nameSuffix.utf8.count
        var found: [(name: String, stamp: ItemStamp)] = []
        found.reserveCapacity(candidates.count)
        // `folder/` as C bytes, for a placeholder's path when its attribute cannot be read.
        var placeholderPath: [CChar] = []
        names.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            for candidate in candidates.sorted(by: { $0.inode < $1.inode }) {
                let start = Int(candidate.offset), length = Int(candidate.length)
                let entry = UnsafeRawPointer(base + start).assumingMemoryBound(to: CChar.self)
                var facts = PlaceholderFacts.readAttribute(in: descriptor, entry: entry)
                if facts == nil {
                    if placeholderPath.isEmpty {
                        placeholderPath = PathBytes.bytes(of: folder).map { CChar(bitPattern: $0) } + [CChar(UInt8(ascii: "/"))]
                    }
                    let prefix = placeholderPath.count
                    for byte in buffer[start..<start + length] { placeholderPath.append(CChar(bitPattern: byte)) }
                    placeholderPath.append(0)
                    facts = placeholderPath.withUnsafeBufferPointer { path in
                        path.baseAddress.flatMap { PlaceholderFacts.read(placeholderAtCPath: $0) }
                    }
                    placeholderPath.removeSubrange(prefix...)
                }
                // `.NAME.clouddocs-placeholder` → `NAME` (the filter made sure NAME is not empty).
                let item = UnsafeBufferPointer(rebasing: buffer[start + 1..<start + length - suffixLength])
                guard let facts, !item.contains(UInt8(ascii: "/")) else { continue }
                found.append((PathBytes.string(fromBytes: item),
                              ItemStamp(isFolder: facts.isPackage, size: facts.size, modified: facts.modifiedNanoseconds,
                                        created: facts.createdNanoseconds, inode: candidate.inode, isEvicted: true)))
            }
        }
        return found
    }
}
