import Foundation
import Glibc
import SystemSupport

extension UbiquityAccount {
    /// When the item at `url` last changed: its modification time (`st_mtim`, to the
    /// nanosecond), following a final symbolic link to the item it names. For the "Edited 5
    /// minutes ago" line of a document list. Any thread.
    ///
    /// - Throws: `.itemNotFound` when nothing is there (a dangling link included);
    ///   `.itemUnavailable(path:errno:)` when the status cannot be read otherwise.
    public func modificationDate(ofItemAt url: URL) throws(UbiquityError) -> Date {
        let path = PathBytes.path(of: url.standardizedFileURL)
        var info = stat()
        // errno is read inside the closure (`valueOrErrno`), right after `stat` returns.
        if case .failure(let code) = PathBytes.withCString(path, { cPath in valueOrErrno { stat(cPath, &info) } }) {
            if code == .noSuchFileOrDirectory || code == .notDirectory { throw .itemNotFound(path: url.standardizedFileURL.path) }
            throw .itemUnavailable(path: url.standardizedFileURL.path, errno: code)
        }
        return Date(timeIntervalSince1970: TimeInterval(info.st_mtim.tv_sec) + TimeInterval(info.st_mtim.tv_nsec) / 1e9)
    }

    /// The time since the item at `url` last changed (``modificationDate(ofItemAt:)``), as of
    /// `now`: negative when the item's date is later (a clock set differently on the device that
    /// wrote it). Any thread. Same errors as ``modificationDate(ofItemAt:)``.
    public func timeSinceModification(ofItemAt url: URL, now: Date = Date()) throws(UbiquityError) -> TimeInterval {
        now.timeIntervalSince(try modificationDate(ofItemAt: url))
    }
}
