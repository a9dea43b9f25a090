import Foundation

extension Coordinator {
    /// Reads the item at `url` once no writer holds it, after its presenters have relinquished it
    /// (and saved, unless `.withoutChanges`). `reader` runs on the calling thread with the URL to
    /// use: if a coordinated move (``item(at:didMoveTo:)``) moved the item while this call waited,
    /// that is the item's new place (an item moved more than 8 times in a row while waiting throws
    /// ``CoordinationError/itemKeptMoving(_:)``). Throws ``CoordinationError`` if the wait fails (then `reader` is not run); rethrows what
    /// `reader` throws.
    public func coordinate<T>(
        readingItemAt url: URL, options: ReadingOptions = [], byAccessor reader: (URL) throws -> T
    ) throws -> T {
        try performSingle(url, .reading(options), reader)
    }

    /// Writes the item at `url` once no other reader or writer holds it, after its presenters have
    /// relinquished it (and accommodated a deletion, or saved for `.forMerging`). `writer` runs on
    /// the calling thread with the URL to use (the new place if the item was moved while this call
    /// waited, as for reads). Presenters are told about the change afterwards. Throws
    /// ``CoordinationError`` if the wait fails (then `writer` is not run); rethrows what `writer` throws.
    public func coordinate<T>(
        writingItemAt url: URL, options: WritingOptions = [], byAccessor writer: (URL) throws -> T
    ) throws -> T {
        try performSingle(url, .writing(options), writer)
    }

    /// Reads one item and writes another (for example, copying) in one coordinated access.
    /// Both locks are held while `readerWriter` runs on the calling thread.
    public func coordinate<T>(
        readingItemAt readingURL: URL, options readingOptions: ReadingOptions = [],
        writingItemAt writingURL: URL, options writingOptions: WritingOptions = [],
        byAccessor readerWriter: (URL, URL) throws -> T
    ) throws -> T {
        try perform([
            .readingIntent(with: readingURL, options: readingOptions),
            .writingIntent(with: writingURL, options: writingOptions),
        ]) { urls in try readerWriter(urls[0], urls[1]) }
    }

    /// Writes two items in one coordinated access — the pattern for a move: lock the source
    /// `.forMoving` and the destination `.forReplacing`, move, then call ``item(at:didMoveTo:)``.
    public func coordinate<T>(
        writingItemAt url1: URL, options options1: WritingOptions = [],
        writingItemAt url2: URL, options options2: WritingOptions = [],
        byAccessor writer: (URL, URL) throws -> T
    ) throws -> T {
        try perform([
            .writingIntent(with: url1, options: options1),
            .writingIntent(with: url2, options: options2),
        ]) { urls in try writer(urls[0], urls[1]) }
    }
}
