import FileCoordination
import Foundation
import Glibc
import SystemSupport

/// The folder `fsync` of a document's save, made after the save's write lock is released.
///
/// A safe save writes a temporary file, `fsync`s it, renames it over the document and then
/// `fsync`s the folder so that the rename itself survives a power loss. Only the first `fsync`
/// protects the original: once the temporary file's bytes are on the disk, a crash before the
/// folder is flushed can bring back the old name's file — the intact original — never a torn
/// one. So the folder's flush need not keep every other reader and writer of the file waiting:
/// `CloudDocument.performSave` collects it (`collecting(_:)`) while it holds the write lock and
/// makes it (`flush()`) once the lock is gone, before the save returns. A save reported as done is
/// as durable as before; the file's next writer simply no longer waits for our folder's flush.
///
/// `SafeSave.write` hands its folder over (`adopt`) when the calling thread collects; called
/// anywhere else, it flushes the folder itself, as it always did.
///
/// `@unchecked Sendable`: never shared — one save's thread creates, fills and flushes it; the
/// thread-local list (`ThreadLocalList`) holds it only while `collecting` runs on that thread.
///
/// It also carries the descriptors of the files the save replaced (`ReplacedFileRelease`), released
/// once the folder is flushed (`releaseReplacedFiles(on:)`, or `deinit` when the save failed).
final class DeferredFolderFlush: @unchecked Sendable {
    private var folders: [(descriptor: Int32, path: String)] = []
    private var replacedFiles: [Int32] = []

    /// The collectors of the calling thread's `collecting` calls, innermost last.
    private static let collectors = ThreadLocalList<DeferredFolderFlush>()

    /// The collector of the calling thread's innermost `collecting`, if any.
    static var current: DeferredFolderFlush? { collectors.last }

    /// Runs `body` with this collector as the calling thread's; the previous one is restored after.
    func collecting<T>(_ body: () throws -> T) rethrows -> T {
        Self.collectors.append(self)
        defer { Self.collectors.removeLast() }
        return try body()
    }

    /// Takes `descriptor` (an open folder whose flush is owed): closed by `flush()` or `deinit`;
    /// and `replaced` (a held replaced file, or -1), released by `releaseReplacedFiles(on:)` or
    /// `deinit`.
    func adopt(_ descriptor: Int32, path: String, replaced: Int32 = -1) {
        folders.append((descriptor, path))
        if replaced >= 0 { replacedFiles.append(replaced) }
    }

    /// Releases the replaced files adopted (`ReplacedFileRelease.release(_:on:)`: in a block on
    /// `queue`, the save's own serial queue). Call after `flush()`.
    func releaseReplacedFiles(on queue: DispatchQueue?) {
        for descriptor in replacedFiles { ReplacedFileRelease.release(descriptor, on: queue) }
        replacedFiles.removeAll()
    }

    /// `fsync`s and closes every folder adopted. Throws the first failure (`call`, `path`,
    /// `errno`), after closing them all.
    func flush() throws(SystemCallError) {
        var failure: SystemCallError?
        for folder in folders {
            do throws(SystemCallError) {
                try FileDescriptor(rawValue: folder.descriptor, path: folder.path).sync()
            } catch {
                if failure == nil { failure = error }
            }
            _ = Glibc.close(folder.descriptor)
        }
        folders.removeAll()
        if let failure { throw failure }
    }

    deinit {
        for folder in folders { _ = Glibc.close(folder.descriptor) }
        for descriptor in replacedFiles { ReplacedFileRelease.release(descriptor, on: nil) }
    }
}
