import Foundation
import SystemSupport

/// One key of a query's sort order (Apple's `NSSortDescriptor(key:ascending:)` on a metadata
/// attribute). Text compares by Unicode scalar order of the displayed text, numbers and dates
/// numerically; items without a value (a folder's size) sort first. Ties keep the order the
/// items were found in.
public struct MetadataQuerySortKey: Sendable, Hashable {
    /// The attribute compared.
    public var attribute: MetadataItemAttribute
    /// Smallest first when true.
    public var ascending: Bool

    /// Sorts by `attribute`, smallest first unless `ascending` is false.
    public init(_ attribute: MetadataItemAttribute, ascending: Bool = true) {
        self.attribute = attribute
        self.ascending = ascending
    }

    /// Whether `left` sorts before `right` by `keys` (nil: equal by every key).
    static func precedes(_ left: MetadataItem, _ right: MetadataItem, by keys: [MetadataQuerySortKey]) -> Bool? {
        for key in keys {
            let order = compare(left, right, key.attribute)
            if order == 0 { continue }
            return key.ascending ? order < 0 : order > 0
        }
        return nil
    }

    private static func compare(_ left: MetadataItem, _ right: MetadataItem, _ attribute: MetadataItemAttribute) -> Int {
        switch attribute {
        case .fsName: return order(PathBytes.display(left.name), PathBytes.display(right.name))
        case .path: return order(PathBytes.display(left.path), PathBytes.display(right.path))
        case .fsSize: return order(left.isFolder ? -1 : left.size, right.isFolder ? -1 : right.size)
        case .fsContentChangeDate: return order(left.modifiedNanoseconds, right.modifiedNanoseconds)
        case .fsCreationDate: return order(left.createdNanoseconds, right.createdNanoseconds)
        default:
            return order(String(describing: left.value(of: attribute) ?? ""), String(describing: right.value(of: attribute) ?? ""))
        }
    }

    private static func order<T: Comparable>(_ left: T, _ right: T) -> Int {
        left < right ? -1 : (left == right ? 0 : 1)
    }
}
