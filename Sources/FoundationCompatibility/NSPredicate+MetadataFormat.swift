import Foundation
internal import Ubiquity

// swift-corelibs-foundation marks `NSPredicate(format:)` unavailable ("Predicate strings and
// key-value coding are not supported"). These initializers, with Apple's exact signatures, take
// their place when FoundationCompatibility is imported (the compiler prefers an available
// overload to an unavailable one), for the subset of the format language that metadata queries
// use — see Docs/MetadataQuery.md for the grammar:
//
//     query.predicate = NSPredicate(format: "%K LIKE %@", NSMetadataItemFSNameKey, "*.txt")
//
// The predicate is an `NSPredicate(block:)` that evaluates `NSMetadataItem`s (any other object:
// false). A format string outside the subset does not trap (Apple's raises an exception): the
// predicate matches nothing, `metadataFormatError` says what is wrong where, and
// `NSMetadataQuery.start()` refuses it (returns false). So does a format nested more than 128
// levels deep (parentheses and `NOT`/`!`), which would otherwise overflow the stack.

/// Asks a predicate made by these initializers for its parsed form: the block fills it in.
final class MetadataPredicateProbe: @unchecked Sendable {
    // @unchecked: filled in by the predicate's block during one synchronous `evaluate(with:)` call
    // of the thread that made the probe, and read by that thread afterwards.
    var parsed: Result<MetadataItemPredicate, MetadataPredicateFormatError>?
}

extension NSPredicate {
    /// A predicate from a format string of the metadata-query subset, with `%K`, `%@`, `%d`, …
    /// arguments, as on Apple platforms. An unusable format gives a predicate that matches nothing
    /// (see `metadataFormatError`) instead of an exception.
    public convenience init(format predicateFormat: String, _ args: any CVarArg...) {
        self.init(format: predicateFormat, argumentArray: args)
    }

    /// ``init(format:_:)`` with the arguments in an array.
    public convenience init(format predicateFormat: String, argumentArray arguments: [Any]?) {
        let parsed = Result { () throws(MetadataPredicateFormatError) in
            try MetadataItemPredicate(format: predicateFormat, argumentArray: arguments ?? [])
        }
        self.init { object, _ in
            if let probe = object as? MetadataPredicateProbe { probe.parsed = parsed; return false }
            guard let item = object as? NSMetadataItem, case .success(let predicate) = parsed else { return false }
            return predicate.evaluate(item.item)
        }
    }

    /// For a predicate made from a format string here: why the format could not be used, or nil
    /// when it was parsed. Nil for every other predicate. (Not in Apple's API.)
    public var metadataFormatError: (any Error)? {
        if case .failure(let error) = metadataFormatParse { return error }
        return nil
    }

    /// The parsed form of a predicate made from a format string here; nil for other predicates.
    var metadataFormatParse: Result<MetadataItemPredicate, MetadataPredicateFormatError>? {
        let probe = MetadataPredicateProbe()
        _ = evaluate(with: probe)
        return probe.parsed
    }
}
