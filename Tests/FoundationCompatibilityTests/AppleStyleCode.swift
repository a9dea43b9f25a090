// Code written the way packages written for Apple platforms write it — an append-only log file,
// a presenter that watches a document, copy and move helpers — compiled here unchanged. The only
// Linux-specific line is the import below; on Apple platforms `canImport` is false and
// Foundation's own classes are used.
import Foundation
import Synchronization
#if canImport(FoundationCompatibility)
import FoundationCompatibility
#endif

/// A log file several processes append to (the pattern of logging libraries and stores).
struct AppendOnlyLog {
    let url: URL

    /// Appends `line` in one coordinated write: the read-modify-write happens inside it, so two
    /// processes appending at once never lose a line.
    func append(_ line: String) throws {
        var coordinationError: NSError?
        var writeError: Error?
        let coordinator = NSFileCoordinator(filePresenter: nil)
        coordinator.coordinate(writingItemAt: url, options: .forMerging, error: &coordinationError) { url in
            do {
                var contents = (try? Data(contentsOf: url)) ?? Data()
                contents.append(Data((line + "\n").utf8))
                try contents.write(to: url, options: .atomic)
            } catch {
                writeError = error
            }
        }
        if let error = coordinationError ?? writeError {
            throw error
        }
    }

    /// The whole log, read in a coordinated read.
    func read() throws -> String {
        var error: NSError?
        var text: String?
        NSFileCoordinator(filePresenter: nil).coordinate(readingItemAt: url, options: [], error: &error) { url in
            text = try? String(contentsOf: url, encoding: .utf8)
        }
        if let error { throw error }
        return text ?? ""
    }

    /// Reads without caring why it failed (the `error: nil` form).
    func readIgnoringErrors() -> Data? {
        var data: Data?
        NSFileCoordinator().coordinate(readingItemAt: url, options: .withoutChanges, error: nil) { url in
            data = try? Data(contentsOf: url)
        }
        return data
    }
}

/// The minimal presenter: constant URL and queue, no locks, no annotations.
final class Logger: NSObject, NSFilePresenter {
    let presentedItemURL: URL?
    let presentedItemOperationQueue = OperationQueue()

    init(url: URL) {
        presentedItemURL = url
        super.init()
    }
}

/// The messages a presenter received, in order. Sendable, so the presenter's reacquirers (which
/// Apple's SDK declares `@Sendable`, like the completion handlers) can record into it.
final class MessageLog: Sendable {
    private let entries = Mutex<[String]>([])
    /// Signalled after every message.
    let arrived = DispatchSemaphore(value: 0)

    func record(_ message: String) {
        entries.withLock { $0.append(message) }
        arrived.signal()
    }

    var all: [String] { entries.withLock { $0 } }
}

/// A presenter for an open document: it gives way to writers, reacquires afterwards, saves its
/// unsaved edits when someone wants to read, follows moves, and can refuse to save.
final class DocumentWatcher: NSObject, NSFilePresenter {
    private let lock = NSLock()
    private var url: URL
    private var unsavedText: String?
    private var saveRefusal: NSError?
    let log = MessageLog()

    let presentedItemOperationQueue: OperationQueue = {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        return queue
    }()

    init(url: URL) {
        self.url = url
        super.init()
    }

    var presentedItemURL: URL? {
        lock.lock(); defer { lock.unlock() }
        return url
    }

    /// Edits not yet written to disk; written when another party asks for them.
    func edit(_ text: String) {
        lock.lock(); defer { lock.unlock() }
        unsavedText = text
    }

    /// Makes the next save requests fail with `error`.
    func refuseToSave(with error: NSError) {
        lock.lock(); defer { lock.unlock() }
        saveRefusal = error
    }

    func relinquishPresentedItem(toWriter writer: @escaping @Sendable ((@Sendable () -> Void)?) -> Void) {
        log.record("relinquishToWriter")
        writer { [log] in log.record("reacquire") }
    }

    func savePresentedItemChanges(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        log.record("save")
        lock.lock()
        let refusal = saveRefusal
        let text = unsavedText
        unsavedText = nil
        lock.unlock()
        if let refusal {
            completionHandler(refusal)
            return
        }
        guard let text, let url = presentedItemURL else {
            completionHandler(nil)
            return
        }
        // Saving from here goes through a coordinator acting for this presenter, as UIDocument does.
        var error: NSError?
        var writeError: Error?
        NSFileCoordinator(filePresenter: self).coordinate(writingItemAt: url, options: [], error: &error) { url in
            do { try Data(text.utf8).write(to: url) } catch { writeError = error }
        }
        completionHandler(error ?? writeError)
    }

    func presentedItemDidChange() {
        log.record("didChange")
    }

    func presentedItemDidMove(to newURL: URL) {
        lock.lock()
        url = newURL
        lock.unlock()
        log.record("didMove:\(newURL.lastPathComponent)")
    }
}

enum FileOperations {
    /// Copies `source` to `destination`, reading one and writing the other in one coordination.
    static func copy(_ source: URL, to destination: URL) throws {
        var error: NSError?
        var copyError: Error?
        let coordinator = NSFileCoordinator(filePresenter: nil)
        coordinator.coordinate(readingItemAt: source, options: [], writingItemAt: destination,
                               options: .forReplacing, error: &error) { readURL, writeURL in
            do {
                try Data(contentsOf: readURL).write(to: writeURL)
            } catch {
                copyError = error
            }
        }
        if let error = error ?? copyError { throw error }
    }

    /// Moves `source` to `destination` the way Apple's documentation describes.
    static func move(_ source: URL, to destination: URL, presenter: NSFilePresenter? = nil) throws {
        var error: NSError?
        var moveError: Error?
        let coordinator = NSFileCoordinator(filePresenter: presenter)
        coordinator.coordinate(writingItemAt: source, options: .forMoving, writingItemAt: destination,
                               options: .forReplacing, error: &error) { from, to in
            do {
                coordinator.item(at: from, willMoveTo: to)
                try FileManager.default.moveItem(at: from, to: to)
                coordinator.item(at: from, didMoveTo: to)
            } catch {
                moveError = error
            }
        }
        if let error = error ?? moveError { throw error }
    }

    /// Reads `url` without blocking the caller; `completion` gets the bytes or the error.
    static func readAsynchronously(_ url: URL, completion: @escaping @Sendable (Result<Data, Error>) -> Void) {
        let intent = NSFileAccessIntent.readingIntent(with: url, options: [])
        let queue = OperationQueue()
        NSFileCoordinator(filePresenter: nil).coordinate(with: [intent], queue: queue) { error in
            if let error {
                completion(.failure(error))
                return
            }
            completion(Result { try Data(contentsOf: intent.url) })
        }
    }

    /// Deletes several files after asking their presenters once, as a batch.
    static func deleteAll(_ urls: [URL]) -> NSError? {
        var error: NSError?
        var itemError: NSError?
        let coordinator = NSFileCoordinator(filePresenter: nil)
        coordinator.prepare(forReadingItemsAt: [], options: [], writingItemsAt: urls, options: .forDeleting,
                            error: &error) { completionHandler in
            for url in urls {
                coordinator.coordinate(writingItemAt: url, options: .forDeleting, error: &itemError) { url in
                    try? FileManager.default.removeItem(at: url)
                }
            }
            completionHandler()
        }
        return error ?? itemError
    }
}
