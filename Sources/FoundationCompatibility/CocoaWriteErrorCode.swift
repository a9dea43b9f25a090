import Foundation
internal import FileCoordination

/// The Cocoa code of a failed write, from its `errno`: the one table shared by
/// `FileVersionErrorMapping` and `UbiquityErrorMapping`.
///
/// | errno | code |
/// |---|---|
/// | `ENOSPC`, `EDQUOT` | `NSFileWriteOutOfSpaceError` (640) |
/// | `EACCES`, `EPERM` | `NSFileWriteNoPermissionError` (513) |
/// | `EROFS` | `NSFileWriteVolumeReadOnlyError` (642) |
/// | `ENOENT` | `NSFileNoSuchFileError` (4) |
/// | otherwise | `NSFileWriteUnknownError` (512) |
enum CocoaWriteErrorCode {
    static func code(forErrno number: Errno) -> Int {
        switch number {
        case .noSpace, .diskQuotaExceeded: return NSFileWriteOutOfSpaceError
        case .permissionDenied, .notPermitted: return NSFileWriteNoPermissionError
        case .readOnlyFileSystem: return NSFileWriteVolumeReadOnlyError
        case .noSuchFileOrDirectory: return NSFileNoSuchFileError
        default: return NSFileWriteUnknownError
        }
    }
}
