import Foundation

/// A snapshot of a document's contents, as produced by `contents(forType:)` and passed to
/// `load(fromContents:ofType:)`: either the bytes of a regular file, or a whole file package
/// (a directory document, Apple's directory `FileWrapper`).
///
/// A value type holding immutable data: may be created on one thread and read on another.
/// Nothing here can fail.
public enum DocumentContents: Sendable, Equatable {
    /// The contents of a regular file.
    case data(Data)
    /// The contents of a directory document.
    case package(FilePackage)

    /// The bytes if this is ``data(_:)``, else `nil`.
    public var data: Data? {
        if case .data(let bytes) = self { return bytes }
        return nil
    }

    /// The package if this is ``package(_:)``, else `nil`.
    public var package: FilePackage? {
        if case .package(let package) = self { return package }
        return nil
    }

    /// The number of bytes of content: the size of the data, or the sum of the sizes of every
    /// file in the package (see ``FilePackage/totalByteCount``).
    public var byteCount: Int {
        switch self {
        case .data(let bytes): return bytes.count
        case .package(let package): return package.totalByteCount
        }
    }
}
