import CloudDocuments
import Foundation

/// One change to one file by a program that makes the change and exits (`text-editor append`,
/// `image-tool invert`): the file is read, changed and written back inside **one** coordinated
/// write.
///
/// Opening a document (a coordinated read), changing it and closing it (a coordinated write)
/// leaves a gap between the read and the write in which another process can write the file; its
/// change is then merged at best, kept as a conflict version, or lost. Here nobody else can read
/// or write the file (through a ``Coordinator``, in any process) from before the read until after
/// the write, so programs editing one file at once apply their changes one after another, each on
/// top of the others', and no conflict version is made.
///
/// - The write is `.forMerging`: presenters of the file in any process (a `TextDocument` open in
///   another program with unsaved edits, say) save first, so the change is made on top of
///   theirs; afterwards they are told the file changed, and documents reload it.
/// - The new contents are written with ``SafeSave/write(_:to:creating:progress:)``: a temporary
///   file in the same folder, `fsync`, a rename over the original, `fsync` of the folder. The file
///   holds the old or the new contents, never half of them, and once the edit returns the new
///   contents survive a crash.
public enum CoordinatedFileEdit {
    /// What a change decided: the bytes to write (`nil` leaves the file as it is, unwritten) and a
    /// value to hand back to the caller.
    public struct Outcome<Result: Sendable>: Sendable {
        /// The new contents of the file, or `nil` for no change.
        public var newContents: Data?
        /// What ``edit(_:savingTo:coordinator:_:)`` returns.
        public var result: Result

        /// An outcome writing `newContents` (nothing when `nil`) and returning `result`.
        public init(newContents: Data?, result: Result) {
            self.newContents = newContents
            self.result = result
        }
    }

    /// Reads the regular file at `url`, passes its bytes to `change`, and writes the contents
    /// `change` decides on to `destination` (by default back to `url`), all while holding the
    /// coordinated locks: a `.forMerging` write of `destination`, and a read of `url` when that is
    /// another file.
    ///
    /// - Parameters:
    ///   - url: The file to read (a symbolic link is followed).
    ///   - destination: Where to write, when not `url`. It is replaced, or created when missing;
    ///     `url` is then left as it is.
    ///   - coordinator: The coordinator to use (its ``Coordinator/timeout`` bounds the wait).
    ///   - change: Makes the new contents from the old. Runs once, with the locks held.
    /// - Returns: ``Outcome/result`` of what `change` returned.
    /// - Throws: ``CoordinationError`` when the wait for the locks fails (nothing was read);
    ///   ``DocumentError/fileNotFound(_:)`` when nothing is at `url`,
    ///   ``DocumentError/notReadable(_:underlying:errno:)`` when it is not a regular file or cannot be
    ///   read; what `change` throws; the ``DocumentError`` of a failed write. The files are then
    ///   left as they were, except after the write's two late failures that say the new contents
    ///   are in place (see ``SafeSave/write(_:to:creating:progress:)``).
    ///
    /// Threading: call it from any task or actor (the main actor included); it suspends the
    /// caller while it waits for the locks. Reading, `change` and writing run on a thread of the
    /// coordinator's own, never on the caller's thread or the main actor.
    public static func edit<Result: Sendable>(
        _ url: URL, savingTo destination: URL? = nil, coordinator: Coordinator = Coordinator(),
        _ change: @escaping @Sendable (_ contents: Data) throws -> Outcome<Result>
    ) async throws -> Result {
        let target = destination ?? url
        var intents = [FileAccessIntent.writingIntent(with: target, options: .forMerging)]
        if target.standardizedFileURL.path != url.standardizedFileURL.path {
            intents.insert(.readingIntent(with: url), at: 0)
        }
        return try await coordinator.coordinate(with: intents) { granted in
            // The intents' URLs are where the items are now (a coordinated move may have moved
            // them while this waited).
            let writeURL = granted[granted.count - 1].url
            let readURL = granted.count == 1 ? writeURL : granted[0].url
            let outcome = try change(try DocumentReader.regularFileContents(at: readURL, naming: url))
            if let newContents = outcome.newContents {
                try SafeSave.write(newContents, to: writeURL, creating: false)
            }
            return outcome.result
        }
    }
}
