import Foundation
import Glibc
import SystemSupport

extension WebDAVStore {
    /// Finds out what the server honours, in a private folder `.clouddocsd-probe-<random>/` under
    /// the root that is removed afterwards (also when a step fails):
    ///
    /// 1. `folderTagsPropagate`: the probe folder's tag is read, a file is written two levels
    ///    below it (`sub/deep`), and the tag read again; changed means propagation.
    /// 2. `tagInWriteResponse`: whether the creating `PUT` (`If-None-Match: *`) answered with an
    ///    `ETag`.
    /// 3. `strongTagsImmediately`: the tag read right after each write is strong every time
    ///    (Apache's default `FileETag MTime Size` marks it weak for about a second).
    /// 4. `tagChangesOnEveryWrite`: same-size rewrites, right after each other, each change the tag
    ///    — and either every tag is the SHA-1 of the bytes written (Apache's `FileETag Digest`: it
    ///    changes with the bytes whenever they change, proved without a clock), or at least one pair
    ///    the server dated within the same second did (WsgiDAV's tag is path, mtime in whole seconds
    ///    and size, so a rewrite within the same second keeps it, and one across a second boundary
    ///    proves nothing). Up to eight rewrites are made to find such a pair; without one the answer
    ///    is `false` (safe mode), never a guess.
    /// 5. `honoursConditions`: `PUT` with `If-None-Match: *` on the existing file, `PUT` with
    ///    `If-Match` of a made-up tag and `DELETE` with that tag must all answer 412 and leave the
    ///    file as it was (`rclone serve webdav` ignores all three).
    /// 6. `hasFileIDs`: the listing carried `oc:fileid`.
    ///
    /// The result is kept (``capabilities``). Throws what a request threw (unreachable server,
    /// credentials refused, …): a probe that could not finish reports nothing.
    public func probe() async throws(RemoteStoreError) -> RemoteCapabilities {
        let folder = try probeFolderPath()
        try await makeFolder(folder)
        let outcome: Result<RemoteCapabilities, RemoteStoreError>
        do {
            outcome = .success(try await runProbe(in: folder))
        } catch {
            outcome = .failure(error)
        }
        // Removed whatever happened; a failure to remove does not hide the probe's own outcome.
        try? await delete(folder, condition: .unconditional)
        let capabilities = try outcome.get()
        remember(capabilities)
        return capabilities
    }

    private func probeFolderPath() throws(RemoteStoreError) -> RemotePath {
        var random = SystemRandomNumberGenerator()
        let suffix = String(random.next(), radix: 16)
        guard let path = RemotePath.root.appending(".clouddocsd-probe-" + suffix) else {
            throw .malformedResponse("probe folder name")
        }
        return path
    }

    private func runProbe(in folder: RemotePath) async throws(RemoteStoreError) -> RemoteCapabilities {
        guard let sub = folder.appending("sub"), let deep = sub.appending("deep.txt"),
              let file = folder.appending("probe.txt") else { throw .malformedResponse("probe paths") }
        let scratch = try ProbeScratch()
        defer { scratch.remove() }

        // 1. Folder tags.
        try await makeFolder(sub)
        let folderBefore = try await item(at: folder)?.tag
        _ = try await upload(try scratch.file("deep"), to: deep, condition: .mustNotExist, progress: { _, _ in })
        let folderAfter = try await item(at: folder)?.tag
        let folderTagsPropagate = folderBefore != nil && folderAfter != nil && folderBefore?.value != folderAfter?.value

        // 2.–3. Create, read the tag at once.
        let firstContents = try scratch.file("probe-A")
        let created = try await upload(firstContents, to: file, condition: .mustNotExist, progress: { _, _ in })
        let tagInWriteResponse = created != nil
        guard let first = try await item(at: file) else { throw .notFound(file) }
        var allStrong = first.tag.map { !$0.isWeak } ?? false
        let hasTags = first.tag != nil
        var hasFileIDs = first.fileID != nil

        // 4. Same-size rewrites. A tag that survives one is definitive (WsgiDAV). That every
        // rewrite changes it proves something only for rewrites the server dated within the same
        // second (a whole-second tag changes across seconds): rewrite until two land in one second,
        // at most eight times; if none do (a slow or loaded machine), assume the worst — safe mode.
        // A tag that is the SHA-1 of the bytes (Apache's `FileETag Digest`) changes with every
        // change of the bytes, whenever it happens: two such tags in a row prove it without
        // depending on when the server dated the writes.
        var previous = first
        var sawKeptTag = first.tag == nil
        var sawChangeWithinASecond = false
        var tagsAreDigests = first.tag.map { ContentDigest.tag($0, isSHA1Of: firstContents.path) } ?? false
        for content in ["probe-B", "probe-C", "probe-D", "probe-E", "probe-F", "probe-G", "probe-H", "probe-I"] {
            let contents = try scratch.file(content)
            _ = try await upload(contents, to: file, condition: .unconditional, progress: { _, _ in })
            guard let current = try await item(at: file) else { throw .notFound(file) }
            tagsAreDigests = tagsAreDigests && (current.tag.map { ContentDigest.tag($0, isSHA1Of: contents.path) } ?? false)
            if current.tag == nil || current.tag?.value == previous.tag?.value {
                sawKeptTag = true
            } else if tagsAreDigests {
                sawChangeWithinASecond = true
            } else if let before = previous.modified, let now = current.modified, before == now {
                sawChangeWithinASecond = true
            }
            if current.tag?.isWeak != false { allStrong = false }
            hasFileIDs = hasFileIDs || current.fileID != nil
            previous = current
            if sawKeptTag || sawChangeWithinASecond { break }
        }
        let everyWriteChanges = !sawKeptTag && sawChangeWithinASecond

        // 5. Conditions: each must be refused with 412 and leave the file alone.
        let wrongTag = RemoteTag(strong: "\"clouddocsd-probe-no-such-tag\"")
        var honours = true
        for condition in [RemoteWriteCondition.mustNotExist, .mustMatch(wrongTag)] {
            do {
                _ = try await upload(try scratch.file("probe-X"), to: file, condition: condition, progress: { _, _ in })
                honours = false
            } catch .preconditionFailed {
                // As it should be.
            }
        }
        do {
            try await delete(file, condition: .mustMatch(wrongTag))
            honours = false
        } catch .preconditionFailed {
            // As it should be.
        }
        let after = try await item(at: file)
        if after == nil || after?.size != first.size || (after?.tag?.value != previous.tag?.value && previous.tag != nil) {
            // The "refused" writes changed or removed the file anyway.
            honours = false
        }

        return RemoteCapabilities(honoursConditions: honours, strongTagsImmediately: allStrong,
                                  tagChangesOnEveryWrite: everyWriteChanges, folderTagsPropagate: folderTagsPropagate,
                                  hasFileIDs: hasFileIDs, tagInWriteResponse: tagInWriteResponse, hasTags: hasTags)
    }
}

/// The small local files the probe uploads, in a private temporary folder removed afterwards.
private struct ProbeScratch {
    let folder: URL

    init() throws(RemoteStoreError) {
        var template = Array((NSTemporaryDirectory() + "/clouddocsd-probe-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw .localFile(URL(fileURLWithPath: NSTemporaryDirectory()), errno: Errno(rawValue: errno))
        }
        folder = URL(fileURLWithPath: String(cString: made), isDirectory: true)
    }

    /// A file holding `content` (all probe contents have the same length: same-size rewrites).
    func file(_ content: String) throws(RemoteStoreError) -> URL {
        let url = folder.appendingPathComponent(content)
        do {
            try Data(content.utf8).write(to: url)
        } catch {
            throw .localFile(url, errno: nil)
        }
        return url
    }

    func remove() { try? FileManager.default.removeItem(at: folder) }
}
