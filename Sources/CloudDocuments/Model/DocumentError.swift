import Foundation
import SystemSupport

/// Why a document operation (open, load, save, edit) failed.
///
/// Thrown by ``SafeSave``, ``FilePackage`` and the document class. Each case's
/// ``errorDescription`` says what happened and what to do about it; ``recoverySuggestion`` holds
/// the "what to do" part alone, for user interfaces that show it separately.
///
/// Sendable: `Error` refines `Sendable` in Swift 6, so the error stored by
/// ``couldNotLoad(_:underlying:)`` is `any Error` and is itself Sendable; it is kept as is (not
/// flattened to a string) so callers can inspect it with `as?`. A value type: may be created,
/// thrown and read on any thread.
///
/// ``errno`` gives the system error number behind a case as an `Errno` (`.noSpace`,
/// `.readOnlyFileSystem`, …) and ``underlyingError`` the error kept by
/// ``couldNotLoad(_:underlying:)``, so `error.underlyingErrno` answers through a document.
public enum DocumentError: Error, LocalizedError, Sendable, CustomStringConvertible, UnderlyingErrorCarrying {
    /// There is no file at the URL (it was never created, or was moved or deleted).
    case fileNotFound(URL)
    /// The file exists but could not be read; `underlying` describes the system error, and
    /// `errno` is its number when there is one.
    case notReadable(URL, underlying: String, errno: Errno? = nil)
    /// The file was read but the document's `load(fromContents:ofType:)` threw `underlying`.
    case couldNotLoad(URL, underlying: any Error)
    /// A save with ``SaveOperation/forCreating`` found a file already at the URL; that file was left
    /// untouched.
    case alreadyExists(URL)
    /// A save failed for a reason not covered by a more specific case. `reason` says which step
    /// failed; `errno` is the system error number when there is one. Unless the reason says
    /// otherwise, the original file was left untouched.
    case saveFailed(URL, reason: String, errno: Errno?)
    /// The disk (or the user's quota) is full: `errno` is `ENOSPC` (``Errno/noSpace``) or
    /// `EDQUOT` (``Errno/diskQuotaExceeded``). The original file, if any, was left untouched.
    case diskFull(URL, errno: Errno = .noSpace)
    /// The folder that should contain the file does not exist (any more). The URL is the folder's.
    case folderMissing(URL)
    /// The file or its folder cannot be written: `errno` is the reason when known — read-only file
    /// system (`EROFS`) or permission denied (`EACCES`, `EPERM`).
    case notWritable(URL, errno: Errno? = nil)
    /// The document is closed: open it before reading, editing or saving it.
    case documentClosed
    /// `open` was called on a document that is already open.
    case documentAlreadyOpen
    /// The document does not accept edits right now (``DocumentState/editingDisabled``).
    case editingDisabled
    /// A file package entry name is not usable as a file name: it is empty, `"."` or `".."`, or
    /// contains `"/"` or a NUL character, or (when read from disk) is not valid UTF-8.
    case invalidPackageEntryName(String)
    /// A file package on disk contains an item that is neither a regular file nor a folder (a
    /// symbolic link, a device, a socket, a FIFO); `kind` names it.
    case unsupportedPackageEntry(URL, kind: String)
    /// The document class does not know how to read or write this type identifier.
    case unsupportedFileType(String)
    /// The contents are not valid for this kind of document (for example, text that is not valid
    /// UTF-8); the string says what is wrong. For document subclasses to throw from `load`.
    case contentsInvalid(String)
    /// The document refused to let its file be evicted (files on demand) because it has unsaved
    /// changes: the file on disk is not what the user sees.
    case evictionRefused(URL)

    /// What happened, followed by what to do (the ``recoverySuggestion``).
    public var errorDescription: String? {
        "\(failureReason ?? "The document operation failed.") \(recoverySuggestion ?? "")"
            .trimmingCharacters(in: .whitespaces)
    }

    /// Same as ``errorDescription``.
    public var description: String { errorDescription ?? "DocumentError" }

    /// What happened, in one sentence.
    public var failureReason: String? {
        switch self {
        case .fileNotFound(let url):
            return "The file “\(url.path)” does not exist."
        case .notReadable(let url, let underlying, _):
            return "The file “\(url.path)” could not be read: \(underlying)."
        case .couldNotLoad(let url, let underlying):
            return "The document “\(url.lastPathComponent)” could not be loaded: \(Self.reason(underlying))"
        case .alreadyExists(let url):
            return "A file named “\(url.lastPathComponent)” already exists in “\(url.deletingLastPathComponent().path)”; it was left untouched."
        case .saveFailed(let url, let reason, let code):
            let system = code.map { " (\($0))" } ?? ""
            return "The document “\(url.lastPathComponent)” could not be saved: \(reason)\(system)."
        case .diskFull(let url, _):
            return "There is not enough space on the disk to save “\(url.lastPathComponent)”; nothing on disk was changed (an existing file keeps its previous version)."
        case .folderMissing(let url):
            return "The folder “\(url.path)” does not exist."
        case .notWritable(let url, _):
            return "“\(url.path)” cannot be written: the disk is read-only or you do not have permission."
        case .documentClosed:
            return "The document is closed."
        case .evictionRefused(let url):
            return "“\(url.path)” is open with unsaved changes, so its local copy was not evicted."
        case .documentAlreadyOpen:
            return "The document is already open."
        case .editingDisabled:
            return "The document cannot be edited right now."
        case .invalidPackageEntryName(let name):
            return "“\(name.debugDescription.dropFirst().dropLast())” is not a valid name for an item in a document package (it must not be empty, “.” or “..”, nor contain “/” or NUL, and must be valid UTF-8)."
        case .unsupportedPackageEntry(let url, let kind):
            return "The document package item “\(url.path)” is a \(kind); a package may contain only regular files and folders."
        case .unsupportedFileType(let type):
            return "This kind of document cannot read or write files of type “\(type)”."
        case .contentsInvalid(let reason):
            return "The contents of the document are not valid: \(reason)."
        }
    }

    /// What the user or the program can do about it.
    public var recoverySuggestion: String? {
        switch self {
        case .fileNotFound:
            return "Check that the file was not moved, renamed or deleted, then open it again."
        case .notReadable:
            return "Check the file's permissions and that the disk is connected, then try again."
        case .couldNotLoad(_, let underlying):
            // The cause's own advice when it has some (said once, not twice), else the general one.
            if let advice = (underlying as? any LocalizedError)?.recoverySuggestion { return advice }
            return "The file may be damaged or of another kind; open it with an application that understands it, or restore an earlier version."
        case .alreadyExists:
            return "Choose another name, or save with “forOverwriting” to replace the existing file."
        case .saveFailed:
            return "Try saving again; if it keeps failing, save to another location."
        case .diskFull:
            return "Free some space on the disk and save again."
        case .folderMissing:
            return "Create the folder again or choose another location, then save again."
        case .notWritable:
            return "Make the disk writable or change the permissions, or save to another location."
        case .documentClosed:
            return "Open the document first."
        case .evictionRefused:
            return "Save the document and let it upload, or close it, then evict it again."
        case .documentAlreadyOpen:
            return "Use the document as it is, or close it before opening it again."
        case .editingDisabled:
            return "Wait until the document has finished reloading or reverting, then edit again."
        case .invalidPackageEntryName:
            return "Use a plain file name without “/”."
        case .unsupportedPackageEntry:
            return "Remove or replace that item with a regular file or folder, then open the document again."
        case .unsupportedFileType:
            return "Save the document with a type it supports, or open the file with another application."
        case .contentsInvalid:
            return "Fix or replace the file's contents, or restore an earlier version."
        }
    }

    /// The system error number behind the failure, when there is one: the `errno` of
    /// ``saveFailed(_:reason:errno:)``, ``diskFull(_:errno:)``, ``notWritable(_:errno:)`` and
    /// ``notReadable(_:underlying:errno:)``; ``Errno/noSuchFileOrDirectory`` for
    /// ``fileNotFound(_:)`` and ``folderMissing(_:)``; ``Errno/fileExists`` for
    /// ``alreadyExists(_:)``; the number of an `Errno` or system error that
    /// ``couldNotLoad(_:underlying:)`` keeps. `nil` otherwise.
    public var errno: Errno? {
        switch self {
        case .saveFailed(_, _, let code): return code
        case .diskFull(_, let number): return number
        case .notWritable(_, let number), .notReadable(_, _, let number): return number
        case .fileNotFound, .folderMissing: return .noSuchFileOrDirectory
        case .alreadyExists: return .fileExists
        case .couldNotLoad(_, let underlying): return underlying.underlyingErrno
        default: return nil
        }
    }

    /// The error ``couldNotLoad(_:underlying:)`` keeps; `nil` for the other cases.
    public var underlyingError: (any Error)? {
        if case .couldNotLoad(_, let underlying) = self { return underlying }
        return nil
    }

    /// What went wrong in `error`, as a sentence ending with a period, without its advice: the
    /// advice is ``recoverySuggestion``'s, so ``errorDescription`` says it once.
    private static func reason(_ error: any Error) -> String {
        var text: String
        if let localized = error as? any LocalizedError,
           let reason = localized.failureReason ?? localized.errorDescription {
            text = reason
        } else {
            text = String(describing: error)
        }
        text = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if !text.hasSuffix(".") { text += "." }
        return text
    }
}
