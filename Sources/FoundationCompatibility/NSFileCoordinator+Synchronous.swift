import Foundation
internal import FileCoordination

extension NSFileCoordinator {
    /// Reads the item at `url` once no writer holds it, after its presenters have relinquished it
    /// (and saved, unless `.withoutChanges`). `reader` runs on the calling thread with the URL to
    /// use (the item's new place if a coordinated move moved it while this call waited).
    ///
    /// If the coordination fails, `reader` is not run and `outError` (when not `nil`) is set to an
    /// `NSError` in `NSCocoaErrorDomain` (see ``NSFileCoordinator``); on success it is left alone.
    public func coordinate(
        readingItemAt url: URL, options: ReadingOptions = [], error outError: NSErrorPointer,
        byAccessor reader: (URL) -> Void
    ) {
        do {
            try coordinator.coordinate(readingItemAt: url, options: options.native, byAccessor: reader)
        } catch {
            outError?.pointee = CocoaErrorMapping.nsError(for: error, access: .reading(url, options))
        }
    }

    /// Writes the item at `url` once no other reader or writer holds it, after its presenters have
    /// relinquished it (and accommodated a deletion, or saved for `.forMerging`). `writer` runs on
    /// the calling thread with the URL to use; presenters are told about the change afterwards.
    /// Errors as for the reading form.
    public func coordinate(
        writingItemAt url: URL, options: WritingOptions = [], error outError: NSErrorPointer,
        byAccessor writer: (URL) -> Void
    ) {
        do {
            try coordinator.coordinate(writingItemAt: url, options: options.native, byAccessor: writer)
        } catch {
            outError?.pointee = CocoaErrorMapping.nsError(for: error, access: .writing(url))
        }
    }

    /// Reads one item and writes another (for example, copying) in one coordinated access: both
    /// are held while `readerWriter` runs on the calling thread. Errors as for the reading form.
    public func coordinate(
        readingItemAt readingURL: URL, options readingOptions: ReadingOptions = [],
        writingItemAt writingURL: URL, options writingOptions: WritingOptions = [],
        error outError: NSErrorPointer, byAccessor readerWriter: (URL, URL) -> Void
    ) {
        do {
            try coordinator.coordinate(readingItemAt: readingURL, options: readingOptions.native,
                                       writingItemAt: writingURL, options: writingOptions.native,
                                       byAccessor: readerWriter)
        } catch {
            var access = CocoaErrorMapping.Access.writing(writingURL)
            access.uploadedItem = readingOptions.contains(.forUploading) ? readingURL : nil
            outError?.pointee = CocoaErrorMapping.nsError(for: error, access: access)
        }
    }

    /// Writes two items in one coordinated access — the pattern for a move: the source
    /// `.forMoving`, the destination `.forReplacing`; move, then call ``item(at:didMoveTo:)``.
    /// `writer` runs on the calling thread. Errors as for the reading form.
    public func coordinate(
        writingItemAt url1: URL, options options1: WritingOptions = [],
        writingItemAt url2: URL, options options2: WritingOptions = [],
        error outError: NSErrorPointer, byAccessor writer: (URL, URL) -> Void
    ) {
        do {
            try coordinator.coordinate(writingItemAt: url1, options: options1.native,
                                       writingItemAt: url2, options: options2.native, byAccessor: writer)
        } catch {
            outError?.pointee = CocoaErrorMapping.nsError(for: error, access: .writing(url1))
        }
    }

    /// Prepares the presenters of many items at once for a batch of coordinated accesses: each is
    /// asked once to relinquish (readers' presenters also to save, unless `.withoutChanges`)
    /// before `batchAccessor` runs on the calling thread. Inside it, make the individual
    /// `coordinate` calls, then call the completion handler it receives (from any thread) — the
    /// presenters' reacquirers run then. No lock is held by the batch itself.
    ///
    /// If a presenter refuses or the wait fails, `batchAccessor` is not run and `outError` is set
    /// as for the other forms.
    public func prepare(
        forReadingItemsAt readingURLs: [URL], options readingOptions: ReadingOptions = [],
        writingItemsAt writingURLs: [URL], options writingOptions: WritingOptions = [],
        error outError: NSErrorPointer, byAccessor batchAccessor: (@escaping @Sendable () -> Void) -> Void
    ) {
        do {
            try coordinator.prepare(forReadingItemsAt: readingURLs, options: readingOptions.native,
                                    writingItemsAt: writingURLs, options: writingOptions.native,
                                    byAccessor: batchAccessor)
        } catch {
            let access = CocoaErrorMapping.Access(url: writingURLs.first ?? readingURLs.first,
                                                  isWriting: !writingURLs.isEmpty)
            outError?.pointee = CocoaErrorMapping.nsError(for: error, access: access)
        }
    }
}
