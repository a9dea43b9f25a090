import Foundation

// UIDocument's overridable reading and writing steps, its change-count tokens and its
// file-access queue. The steps run off the main actor (on the document's serial file-access
// queue, inside the coordinated access); the hooks they lead to run on the main actor. The `open`
// steps are declared, with their documentation, in the class body (CloudDocument.swift); their
// default implementations are here.

/// A version of a document's contents, from ``CloudDocument/changeCountToken(for:)``.
public struct DocumentChangeToken: Sendable, Hashable {
    let value: UInt64
}

extension CloudDocument {
    // MARK: Reading

    nonisolated func defaultRead(from url: URL) throws {
        let request = storage.withLock { $0.readRequest }
        let documentURL = request?.documentURL ?? url
        let box = request?.progress ?? HopBox<Progress?>(nil)
        let (contents, identity) = try DocumentReader.read(at: url, documentURL: documentURL) { size in
            startProgress(totalBytes: size, into: box)
        }
        try load(contents, identity: identity, ofType: request?.type ?? TypeIdentifiers.typeIdentifier(for: url))
    }

    /// Hands contents read by ``read(from:)`` to ``load(fromContents:ofType:)`` on the main actor
    /// and waits for it; in the same main-actor turn the document records what it opened (state,
    /// URL, modification date). Call it from an override of ``read(from:)``, off the main actor.
    ///
    /// - Throws: ``DocumentError/couldNotLoad(_:underlying:)`` wrapping what `load` throws.
    nonisolated public final func loadOnMainActor(_ contents: DocumentContents, ofType typeName: String?) throws {
        let url = storage.withLock { $0.readRequest?.readURL ?? $0.fileURL }
        try load(contents, identity: DiskIdentity.of(url), ofType: typeName)
    }

    nonisolated private func load(_ contents: DocumentContents, identity: DiskIdentity?, ofType typeName: String?) throws {
        let request = storage.withLock { $0.readRequest }
        try onMainActor { () throws -> Void in
            if let request, try !request.check() {
                request.skipped.value = true
                return
            }
            do {
                try load(fromContents: contents, ofType: typeName)
            } catch {
                throw DocumentError.couldNotLoad(request?.documentURL ?? fileURL, underlying: error)
            }
            if let request {
                request.loaded.value = true
                request.onLoaded(identity)
                let kept = RacyIdentity.bytesToKeep(for: identity, contents: contents.data)
                storage.withLock { $0.racyContents = kept }
            }
        }
    }

    // MARK: Writing

    nonisolated func defaultWriteContents(_ contents: DocumentContents, andAttributes attributes: [FileAttributeKey: any Sendable]?,
                                          safelyTo url: URL, for saveOperation: SaveOperation) throws {
        let progress = storage.withLock { $0.writeProgress }
        try SafeSave.write(contents, to: url, for: saveOperation, progress: progress)
        if let attributes, !attributes.isEmpty {
            try FileManager.default.setAttributes(attributes.mapValues { $0 as Any }, ofItemAtPath: url.path)
        }
    }

    nonisolated func defaultWriteContents(_ contents: DocumentContents, to url: URL, for saveOperation: SaveOperation,
                                          originalContentsURL: URL?) throws {
        switch contents {
        case .data(let data): try data.write(to: url)
        case .package(let package): try SafeSave.writePackage(package, to: url, creating: saveOperation == .forCreating)
        }
    }

    // MARK: File access

    /// Runs `block` on the document's serial file-access queue, after the lifecycle operations
    /// (open, save, close, revert, autosave) and blocks queued before it, and before those queued
    /// after. Use it for your own file work that must not overlap the document's. Off the main
    /// actor; `block` may block (it delays the document's later operations meanwhile). Any thread.
    nonisolated public func performAsynchronousFileAccess(_ block: @escaping @Sendable () -> Void) {
        enqueueFileAccess(block)
    }

    // MARK: Change tokens

    /// A token for the current version of the contents. A save takes one with its snapshot; pass
    /// it to ``updateChangeCount(withToken:for:)`` once that snapshot is safely written, to mark
    /// that version saved (changes made after it stay unsaved). Any thread. (The document's own
    /// saves do this themselves.)
    nonisolated public func changeCountToken(for saveOperation: SaveOperation) -> DocumentChangeToken {
        DocumentChangeToken(value: storage.withLock { $0.changes.token })
    }

    /// Marks the version `token` was taken of as saved: ``hasUnsavedChanges`` becomes `false` if
    /// nothing changed since, and undoing or redoing back to that version makes it `false` again.
    /// Any thread.
    nonisolated public func updateChangeCount(withToken token: DocumentChangeToken, for saveOperation: SaveOperation) {
        storage.withLock { $0.changes.markSaved(token.value) }
    }
}

extension URL {
    /// Whether two file URLs name the same path once `.` and `..` are removed (what comparing
    /// their `standardizedFileURL`s says). Equal URLs, the usual case in a save, are not
    /// standardized: that costs microseconds, a noticeable part of a small save.
    func isSameFilePath(as other: URL) -> Bool {
        self == other || standardizedFileURL == other.standardizedFileURL
    }
}
