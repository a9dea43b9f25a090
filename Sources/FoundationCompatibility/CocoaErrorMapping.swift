import Foundation
internal import FileCoordination

/// Turns what a FileCoordination call throws into the `NSError` Apple's `NSFileCoordinator` would
/// give: domain `NSCocoaErrorDomain`, a code a Cocoa developer checks for, a localized description,
/// the item's URL and path, and the original error under `NSUnderlyingErrorKey`.
///
/// | `CoordinationError`        | code                                                     |
/// |----------------------------|----------------------------------------------------------|
/// | `.cancelled`               | `NSUserCancelledError` (3072)                            |
/// | `.presenterFailed(e)`      | `e`'s code if `e` is in Cocoa's domain, else `NSFileReadUnknownError` (256) for a read, `NSFileWriteUnknownError` (512) for a write; description: `e`'s |
/// | `.lockFailed` (ENOSPC, EDQUOT) | `NSFileWriteOutOfSpaceError` (640)                   |
/// | `.timedOut`, `.wouldDeadlock`, `.lockDirectoryUnusable`, `.lockFailed` (other errno), `.itemKeptMoving` | `NSFileLockingError` (255) |
/// | `.ioFailed` (ENOENT, ENOTDIR) — e.g. a `.forUploading` read of an item that does not exist | `NSFileReadNoSuchFileError` (260) |
/// | `.ioFailed` (ENOSPC, EDQUOT) | `NSFileWriteOutOfSpaceError` (640) |
/// | `.itemNotDownloaded` (an evicted item that could not be downloaded) | `NSUbiquitousFileUnavailableError` (4353) |
/// | `.ioFailed` (other errno), `.invalidRequest` | `NSFileReadUnknownError` (256) / `NSFileWriteUnknownError` (512) |
///
/// Any other error (none is expected: the accessors of the `error:` forms cannot throw) is passed
/// through if it is already in Cocoa's domain, and otherwise wrapped like `.invalidRequest`.
enum CocoaErrorMapping {
    /// What the failed coordination was for: decides between the read and write codes.
    struct Access {
        /// The first item of the coordination: reported as `NSURLErrorKey` and `NSFilePathErrorKey`.
        var url: URL?
        var isWriting: Bool
        /// The item of a `.forUploading` read, if any.
        var uploadedItem: URL?

        static func reading(_ url: URL, _ options: NSFileCoordinator.ReadingOptions) -> Access {
            Access(url: url, isWriting: false, uploadedItem: options.contains(.forUploading) ? url : nil)
        }
        static func writing(_ url: URL) -> Access { Access(url: url, isWriting: true) }
        static func intents(_ intents: [NSFileAccessIntent]) -> Access {
            let upload = intents.first { $0.isUploadingRead }
            return Access(url: intents.first?.url, isWriting: intents.contains { $0.intent.isWriting },
                          uploadedItem: upload?.url)
        }
    }

    static func nsError(for error: any Error, access: Access) -> NSError {
        guard let coordinationError = error as? CoordinationError else {
            let bridged = error as NSError
            if bridged.domain == NSCocoaErrorDomain { return bridged }
            return make(unknownCode(access), description: bridged.localizedDescription, underlying: error, access: access)
        }
        let code: Int
        var description = coordinationError.description
        var url = access.url
        switch coordinationError {
        case .cancelled:
            code = NSUserCancelledError
        case .presenterFailed(let presenterError):
            let bridged = presenterError as NSError
            code = bridged.domain == NSCocoaErrorDomain ? bridged.code : unknownCode(access)
            description = bridged.localizedDescription
        case .lockFailed(_, let number) where number == .noSpace || number == .diskQuotaExceeded:
            code = NSFileWriteOutOfSpaceError
        case .timedOut, .lockDirectoryUnusable, .lockFailed:
            code = NSFileLockingError
        case .wouldDeadlock(let item), .itemKeptMoving(let item):
            code = NSFileLockingError
            url = item
        case .ioFailed(_, let number) where number == .noSuchFileOrDirectory || number == .notDirectory:
            code = NSFileReadNoSuchFileError
            url = access.uploadedItem ?? url
        case .ioFailed(_, let number) where number == .noSpace || number == .diskQuotaExceeded:
            code = NSFileWriteOutOfSpaceError
        case .ioFailed:
            code = unknownCode(access)
        case .invalidRequest:
            code = unknownCode(access)
        case .itemNotDownloaded(let item, _):
            code = NSUbiquitousFileUnavailableError
            url = item
        }
        return make(code, description: description, underlying: coordinationError,
                    access: Access(url: url, isWriting: access.isWriting, uploadedItem: access.uploadedItem))
    }

    private static func unknownCode(_ access: Access) -> Int {
        access.isWriting ? NSFileWriteUnknownError : NSFileReadUnknownError
    }

    private static func make(_ code: Int, description: String, underlying: any Error, access: Access) -> NSError {
        var userInfo: [String: Any] = [
            NSLocalizedDescriptionKey: description,
            NSUnderlyingErrorKey: underlying,
        ]
        if let url = access.url {
            userInfo[NSURLErrorKey] = url
            if url.isFileURL { userInfo[NSFilePathErrorKey] = url.path }
        }
        return NSError(domain: NSCocoaErrorDomain, code: code, userInfo: userInfo)
    }
}
