import Foundation
import Glibc
import SystemSupport

// Turns failed system calls into the `DocumentError` a caller can act on.

extension DocumentError {
    /// The error for a failed step of a save to `target`, whose containing folder is `folder`.
    /// ENOSPC/EDQUOT → `.diskFull`; EROFS/EACCES/EPERM → `.notWritable`; ENOENT/ENOTDIR while the
    /// folder is gone → `.folderMissing`; anything else → `.saveFailed` naming the step.
    static func forSave(_ error: SystemCallError, target: URL, folder: String) -> DocumentError {
        switch error.code {
        case ENOSPC, EDQUOT:
            return .diskFull(target, errno: error.errno)
        case EROFS, EACCES, EPERM:
            return .notWritable(target, errno: error.errno)
        case ENOENT, ENOTDIR:
            let folderInfo = (try? POSIX.status(folder)) ?? nil
            if folderInfo.map({ $0.st_mode & S_IFMT == S_IFDIR }) != true {
                return .folderMissing(PathBytes.fileURL(folder, isDirectory: true))
            }
            return saveFailed(error, target: target)
        default:
            return saveFailed(error, target: target)
        }
    }

    private static func saveFailed(_ error: SystemCallError, target: URL) -> DocumentError {
        .saveFailed(target, reason: "\(error.call) failed on “\(PathBytes.display(error.path))”", errno: error.errno)
    }

    /// The error for a failed step of reading `path`: ENOENT → `.fileNotFound`, anything else →
    /// `.notReadable` with the system's message.
    static func forRead(_ error: SystemCallError) -> DocumentError {
        let url = PathBytes.fileURL(error.path)
        if error.code == ENOENT { return .fileNotFound(url) }
        return .notReadable(url, underlying: "\(error.call) failed: \(error.errno)", errno: error.errno)
    }
}
