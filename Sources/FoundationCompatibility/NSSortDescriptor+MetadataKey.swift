import Foundation

// swift-corelibs-foundation marks `NSSortDescriptor(key:ascending:)` and `key` unavailable
// (no key-value coding). Metadata queries sort by attribute names, so this initializer, with
// Apple's signature, takes its place when FoundationCompatibility is imported:
//
//     query.sortDescriptors = [NSSortDescriptor(key: NSMetadataItemFSNameKey, ascending: true)]
//
// The descriptor carries the key in its comparator; `NSMetadataQuery` reads it back
// (`metadataQueryKey`). Such a descriptor sorts nothing by itself (every pair compares equal):
// it is meant for metadata queries.

/// Asks a descriptor made here for its key: its comparator fills it in.
final class SortKeyProbe: @unchecked Sendable {
    // @unchecked: filled in during one synchronous `compare(_:to:)` call of the thread that made
    // the probe, and read by that thread afterwards.
    var key: String?
}

extension NSSortDescriptor {
    /// A descriptor for the metadata attribute `key` (an `NSMetadataItem…Key` constant).
    public convenience init(key: String?, ascending: Bool) {
        self.init(keyPath: \SortKeyProbe.self, ascending: ascending) { left, _ in
            (left as? SortKeyProbe)?.key = key
            return .orderedSame
        }
    }

    /// The key of a descriptor made by ``init(key:ascending:)``; nil for any other descriptor.
    var metadataQueryKey: String? {
        guard keyPath == \SortKeyProbe.self as AnyKeyPath else { return nil }
        let probe = SortKeyProbe()
        _ = compare(probe, to: probe)
        return probe.key
    }
}
