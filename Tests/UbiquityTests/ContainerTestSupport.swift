import Foundation
import Glibc
import Testing
import TestSupport
@testable import Ubiquity

/// A scratch cloud for one test: `<folder>/cloud` as the root with container `com.example.notes`
/// (the default) and `com.example.other`, `<folder>/local` for local documents, and an account with
/// that fixed configuration (provider `none` unless given). Removed by `remove()`.
struct ScratchCloud {
    let scratch: Scratch
    let account: UbiquityAccount
    var folder: URL { scratch.url }

    /// With `tmpfsSize` (e.g. "64k"), the root is a tmpfs of that size (``SmallTmpfs``): another
    /// file system than the local folder (moves copy), and one that fills up.
    init(provider: UbiquityProviderKind = .none, tmpfsSize: String? = nil) throws {
        scratch = try Scratch("ubiquity-items")
        let folder = scratch.url
        if let tmpfsSize {
            _ = try SmallTmpfs.mount(size: tmpfsSize, inside: folder, name: "cloud")
        } else {
            try scratch.directory("cloud")
        }
        try scratch.directory("local")
        account = UbiquityAccount(configuration: UbiquityConfiguration(
            root: folder.appending(path: "cloud", directoryHint: .isDirectory),
            containerIdentifiers: ["com.example.notes", "com.example.other"], provider: provider))
    }

    var root: URL { folder.appending(path: "cloud", directoryHint: .isDirectory) }
    var local: URL { folder.appending(path: "local", directoryHint: .isDirectory) }

    /// The default container's `Documents` folder (created).
    func documents() throws -> URL { try account.container().documentsURL }

    /// Writes `text` to a new local file `name`.
    func localFile(_ name: String, _ text: String = "text") throws -> URL {
        let url = local.appending(path: name, directoryHint: .notDirectory)
        try Data(text.utf8).write(to: url)
        return url
    }

    /// The environment that makes the shared account of another process (clouddocs, the worker)
    /// see this cloud.
    var environment: [String: String] {
        ["CLOUDDOCUMENTS_UBIQUITY_CONFIG": folder.appending(path: "none.conf").path,
         "CLOUDDOCUMENTS_UBIQUITY_ROOT": root.path,
         "CLOUDDOCUMENTS_UBIQUITY_CONTAINERS": "com.example.notes,com.example.other",
         "CLOUDDOCUMENTS_UBIQUITY_PROVIDER": "none"]
    }

    func remove() {
        _ = umount2(root.path, Int32(MNT_DETACH))  // lazily; fails harmlessly when not mounted
        scratch.remove()
    }
}

func text(at url: URL) -> String? {
    (try? Data(contentsOf: url)).map { String(decoding: $0, as: UTF8.self) }
}

/// Runs blocking work on a thread of its own (not a cooperative-pool thread).
func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await offCooperativePool(body)
}

/// A presenter that records its moves and signals each.
final class MoveRecorder: FilePresenter {
    let presentedItemURL: URL?
    let presentedItemOperationQueue: OperationQueue
    let moves = Locked<[URL]>([])
    let moved = DispatchSemaphore(value: 0)

    init(_ url: URL) {
        presentedItemURL = url
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        presentedItemOperationQueue = queue
    }

    func presentedItemDidMove(to newURL: URL) {
        moves.withLock { $0.append(newURL) }
        moved.signal()
    }
}

/// A document of plain text.
final class TextDocument: CloudDocument {
    var text = ""

    override func contents(forType typeName: String) throws -> DocumentContents { .data(Data(text.utf8)) }

    override func load(fromContents contents: DocumentContents, ofType typeName: String?) throws {
        text = String(decoding: contents.data ?? Data(), as: UTF8.self)
    }
}

/// Waits until the document's presenter queue has run what was queued on it so far.
func drain(_ document: CloudDocument) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        document.presentedItemOperationQueue.addOperation { continuation.resume() }
    }
    await MainActor.run {}
}
