import Foundation

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
    static func code(forErrno number: Int32) -> Int {
        switch number {
        case ENOSPC, EDQUOT: return NSFileWriteOutOfSpaceError
        case EACCES, EPERM: return NSFileWriteNoPermissionError
        case EROFS: return NSFileWriteVolumeReadOnlyError
        case ENOENT: return NSFileNoSuchFileError
        default: return NSFileWriteUnknownError
        }
    }
}
