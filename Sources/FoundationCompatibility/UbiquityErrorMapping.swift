import Foundation
internal import Ubiquity

/// Turns a `UbiquityError` into the `NSError` a Cocoa developer expects from `FileManager`'s iCloud
/// methods: domain `NSCocoaErrorDomain`, the error's description, `NSURLErrorKey` and
/// `NSFilePathErrorKey` naming the item, and the `UbiquityError` under `NSUnderlyingErrorKey`.
///
/// | `UbiquityError` | code |
/// |---|---|
/// | `notSignedIn` | `NSUbiquitousFileUbiquityServerNotAvailable` (4355) |
/// | `noContainerIdentifier`, `containerUnavailable`, `itemNotInContainer` | `NSUbiquitousFileUnavailableError` (4353) |
/// | `configurationInvalid` | `NSFileReadCorruptFileError` (259) |
/// | `configurationUnreadable` | `NSFileReadUnknownError` (256) |
/// | `itemNotFound` | `NSFileNoSuchFileError` (4) |
/// | `destinationNotInContainer`, `destinationInContainer` | `NSFileWriteInvalidFileNameError` (514) |
/// | `destinationExists` | `NSFileWriteFileExistsError` (516) |
/// | `providerDoesNotSupportPlaceholders` | `NSFeatureUnsupportedError` (3328) |
/// | `coordinationFailed` | `NSFileLockingError` (255) (`setUbiquitous` maps the `CoordinationError` itself, as `NSFileCoordinator` does) |
/// | `moveFailed` with `ENOSPC`/`EDQUOT` | `NSFileWriteOutOfSpaceError` (640) |
/// | `moveFailed` with `EACCES`/`EPERM` | `NSFileWriteNoPermissionError` (513) |
/// | `moveFailed` with `EROFS` | `NSFileWriteVolumeReadOnlyError` (642) |
/// | `moveFailed` with `ENAMETOOLONG` | `NSFileWriteInvalidFileNameError` (514) |
/// | `moveFailed` with `ENOENT`/`ENOTDIR` | `NSFileNoSuchFileError` (4) |
/// | `moveFailed` otherwise | `NSFileWriteUnknownError` (512) |
/// | `invalidName` | `NSFileWriteInvalidFileNameError` (514) |
/// | `removeFailed` | the write code of its errno, as for `moveFailed` (513 no permission, 642 read-only, 512 otherwise) |
/// | `itemUnavailable` with `ENOENT`/`ENOTDIR` | `NSFileNoSuchFileError` (4) |
/// | `itemUnavailable` with `EACCES`/`EPERM` | `NSFileReadNoPermissionError` (257) |
/// | `itemUnavailable` otherwise | `NSFileReadUnknownError` (256) |
/// | `placeholderInvalid` | `NSFileReadCorruptFileError` (259) |
/// | `evictionRefused` | `NSUbiquitousFileUnavailableError` (4353) |
/// | `placeholderWriteFailed` | the write code of its errno, as for `removeFailed` |
enum UbiquityErrorMapping {
    static func nsError(for error: UbiquityError, item: URL) -> NSError {
        var url = item
        let code: Int
        switch error {
        case .notSignedIn: code = NSUbiquitousFileUbiquityServerNotAvailable
        case .noContainerIdentifier, .containerUnavailable, .itemNotInContainer: code = NSUbiquitousFileUnavailableError
        case .configurationInvalid: code = NSFileReadCorruptFileError
        case .configurationUnreadable: code = NSFileReadUnknownError
        case .itemNotFound: code = NSFileNoSuchFileError
        case .destinationNotInContainer(let path), .destinationInContainer(let path):
            code = NSFileWriteInvalidFileNameError
            url = URL(fileURLWithPath: path)
        case .destinationExists(let path):
            code = NSFileWriteFileExistsError
            url = URL(fileURLWithPath: path)
        case .providerDoesNotSupportPlaceholders: code = NSFeatureUnsupportedError
        case .coordinationFailed: code = NSFileLockingError
        case .moveFailed(_, _, let number):
            switch number {
            case .fileNameTooLong: code = NSFileWriteInvalidFileNameError
            case .notDirectory: code = NSFileNoSuchFileError
            default: code = CocoaWriteErrorCode.code(forErrno: number)
            }
        case .invalidName: code = NSFileWriteInvalidFileNameError
        case .removeFailed(_, let number), .placeholderWriteFailed(_, let number):
            code = CocoaWriteErrorCode.code(forErrno: number)
        case .placeholderInvalid: code = NSFileReadCorruptFileError
        case .evictionRefused: code = NSUbiquitousFileUnavailableError
        case .itemUnavailable(_, let number):
            switch number {
            case .noSuchFileOrDirectory, .notDirectory: code = NSFileNoSuchFileError
            case .permissionDenied, .notPermitted: code = NSFileReadNoPermissionError
            default: code = NSFileReadUnknownError
            }
        }
        var userInfo: [String: Any] = [
            NSLocalizedDescriptionKey: error.errorDescription ?? "\(error)",
            NSUnderlyingErrorKey: error,
            NSURLErrorKey: url,
        ]
        if url.isFileURL { userInfo[NSFilePathErrorKey] = url.path }
        return NSError(domain: NSCocoaErrorDomain, code: code, userInfo: userInfo)
    }
}
