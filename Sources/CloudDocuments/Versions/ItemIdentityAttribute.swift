import CSystemShim
import Foundation
import Glibc
import SystemSupport

/// The extended attribute `user.clouddocuments.id` that carries an item's version-store identity.
/// Extended attributes stay with the inode, so the identity follows every rename or move of the
/// item — coordinated or not, in this process or another — without any hook in the coordinator.
/// A save that replaces the file by a new one drops it; the store then finds the item by its last
/// known path (see ``VersionStore/itemID(for:creating:)``).
///
/// The calls are glibc's `getxattr`/`setxattr` (declared by `<sys/xattr.h>`, which the Glibc
/// module leaves out; CSystemShim imports it). Any thread.
enum ItemIdentityAttribute {
    static let name = "user.clouddocuments.id"

    /// The identity stored on the item at `path` (following a final symbolic link), or `nil` when
    /// it has none, the file system has no user attributes, or the value is not a UUID.
    static func read(_ path: String) -> String? {
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = PathBytes.withCString(path) { cPath in
            buffer.withUnsafeMutableBytes { raw in getxattr(cPath, name, raw.baseAddress, raw.count) }
        }
        guard count > 0, count <= buffer.count else { return nil }
        let text = String(decoding: buffer.prefix(count), as: UTF8.self)
        return UUID(uuidString: text) != nil ? text : nil
    }

    /// Stores `id` on the item at `path`. Returns `false` (and changes nothing) when the file
    /// system refuses user attributes; the store then relies on the item's path alone.
    @discardableResult
    static func write(_ id: String, to path: String) -> Bool {
        let bytes = Array(id.utf8)
        let result = PathBytes.withCString(path) { cPath in
            bytes.withUnsafeBytes { raw in setxattr(cPath, name, raw.baseAddress, raw.count, 0) }
        }
        return result == 0
    }
}
