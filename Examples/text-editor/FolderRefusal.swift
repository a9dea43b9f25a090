import ExampleDocuments
import Foundation
import Glibc

/// A well-formed command that cannot be carried out for a reason the editor found itself.
struct EditorFailure: Error, LocalizedError {
    let message: String
    var failureReason: String? { message }
    var errorDescription: String? { message }
}

enum FolderRefusal {
    /// Refuses `url` when it is a folder that is not a registered package type, **before**
    /// anything is read: opening a plain folder as a document would read the whole tree into
    /// memory (and stop at the first symbolic link inside, with a message about that link) only
    /// to find that a text document cannot be a folder.
    ///
    /// A folder whose extension is a registered package type (``Coordinator/registerPackageExtension(_:)``)
    /// is let through: that is a document, and the document decides whether it can read it.
    /// Anything else (a file, nothing at all, a path that cannot be examined) is let through too:
    /// opening reports those with the library's own errors.
    ///
    /// - Throws: ``EditorFailure`` saying the item is a folder.
    static func check(_ url: URL) throws {
        var info = stat()
        guard stat(url.path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else { return }
        let pathExtension = url.pathExtension.lowercased()
        if !pathExtension.isEmpty, Coordinator.packageExtensions.contains(pathExtension) { return }
        throw EditorFailure(message: "“\(url.path)” is a folder, not a text file")
    }
}
