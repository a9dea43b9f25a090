import Foundation
internal import CloudDocuments

/// Turns a `FileVersionError` into the `NSError` a Cocoa developer expects from `NSFileVersion`:
/// domain `NSCocoaErrorDomain`, the description of the `FileVersionError`, `NSURLErrorKey` and
/// `NSFilePathErrorKey` naming the item, and the `FileVersionError` under `NSUnderlyingErrorKey`.
///
/// | `FileVersionError` | code |
/// |---|---|
/// | `itemNotFound`, `contentsNotFound` | `NSFileReadNoSuchFileError` (260) |
/// | `versionNotFound` | `NSFileNoSuchFileError` (4) |
/// | `unsupportedItem`, `isCurrentVersion` | `NSFeatureUnsupportedError` (3328) |
/// | `coordinationFailed` | `NSFileLockingError` (255) |
/// | `storeFailed` with `ENOSPC`/`EDQUOT` | `NSFileWriteOutOfSpaceError` (640) |
/// | `storeFailed` with `EACCES`/`EPERM` | `NSFileWriteNoPermissionError` (513) |
/// | `storeFailed` with `EROFS` | `NSFileWriteVolumeReadOnlyError` (642) |
/// | `storeFailed` with `ENOENT` | `NSFileNoSuchFileError` (4) |
/// | `storeFailed` otherwise | `NSFileWriteUnknownError` (512) |
enum FileVersionErrorMapping {
    static func nsError(for error: FileVersionError, item: URL) -> NSError {
        let code: Int
        var url = item
        switch error {
        case .itemNotFound(let where_), .contentsNotFound(let where_):
            code = NSFileReadNoSuchFileError
            url = where_
        case .versionNotFound:
            code = NSFileNoSuchFileError
        case .unsupportedItem, .isCurrentVersion:
            code = NSFeatureUnsupportedError
        case .coordinationFailed:
            code = NSFileLockingError
        case .storeFailed(_, _, let number):
            code = CocoaWriteErrorCode.code(forErrno: number)
        }
        var userInfo: [String: Any] = [
            NSLocalizedDescriptionKey: error.description,
            NSUnderlyingErrorKey: error,
            NSURLErrorKey: url,
        ]
        if url.isFileURL { userInfo[NSFilePathErrorKey] = url.path }
        return NSError(domain: NSCocoaErrorDomain, code: code, userInfo: userInfo)
    }
}
