import CloudDocuments
import Foundation

/// A raster image document: an ``RGBAImage`` read from and written to PNG, PPM or PGM.
///
/// - **Reading** detects the format from the file's first bytes (a mislabelled file still opens).
///   Corrupt or truncated data is rejected with ``DocumentError/contentsInvalid(_:)`` carrying the
///   codec's message (opening then fails with ``DocumentError/couldNotLoad(_:underlying:)``, the
///   file untouched); nothing crashes.
/// - **Writing** uses the format named by the file's extension (`png`; `ppm`/`pnm`; `pgm`), so
///   `save(to: other.ppm, for: .forCreating)` converts. PPM and PGM drop alpha; PGM stores gray.
///   Another extension fails the save with ``DocumentError/unsupportedFileType(_:)``.
/// - Setting ``image`` registers an undo action restoring the previous image.
///
/// ## Isolation
/// Like every ``CloudDocument``, an image document is `@MainActor`: ``image`` is a plain stored
/// property, edited on the main actor, where the document also encodes it for saving and decodes
/// what it opens; the bytes are read and written off the main actor. No lock.
public final class ImageDocument: CloudDocument {
    private var storedImage: RGBAImage

    /// Creates a closed image document for `fileURL` holding `image` (by default a 1 × 1
    /// transparent pixel) until it is opened. To make a new file, pass the image and save with
    /// ``SaveOperation/forCreating``.
    public nonisolated init(fileURL: URL, image: RGBAImage? = nil) {
        storedImage = image ?? Self.placeholder
        super.init(fileURL: fileURL)
    }

    /// Same as `init(fileURL:image:)` with no image.
    public nonisolated convenience override init(fileURL: URL) {
        self.init(fileURL: fileURL, image: nil)
    }

    /// A 1 × 1 transparent pixel (its four bytes match its size, so no check is needed).
    nonisolated private static let placeholder = RGBAImage(uncheckedWidth: 1, height: 1, pixels: [0, 0, 0, 0])

    /// The image. Setting a different one registers an undo action restoring the old one.
    public var image: RGBAImage {
        get { storedImage }
        set { setImage(newValue, actionName: nil) }
    }

    /// Replaces the image with `newImage` as one undoable change named `actionName`.
    public func setImage(_ newImage: RGBAImage, actionName: String?) {
        guard storedImage != newImage else { return }
        let previous = storedImage
        storedImage = newImage
        let manager = undoManager
        manager.registerUndo(withTarget: self) { document in
            document.setImage(previous, actionName: nil)
        }
        if let actionName, !manager.isUndoing, !manager.isRedoing {
            manager.setActionName(actionName)
        }
    }

    /// The format saves use: the one named by ``CloudDocument/fileURL``'s extension, or `nil`.
    public var format: ImageFormat? { ImageFormat(url: fileURL) }

    /// The image format for a type identifier (`public.png`, `org.netpbm.ppm`, `org.netpbm.pnm`,
    /// `org.netpbm.pgm`), or `nil`.
    public nonisolated static func format(forType typeName: String) -> ImageFormat? {
        TypeIdentifiers.preferredExtension(forType: typeName).flatMap { ImageFormat(fileExtension: $0) }
    }

    // MARK: Hooks

    /// The image encoded in the format of `typeName`.
    ///
    /// - Throws: ``DocumentError/unsupportedFileType(_:)`` when `typeName` is not PNG, PPM or PGM;
    ///   ``DocumentError/contentsInvalid(_:)`` when the encoder fails (an image edited into an
    ///   inconsistent state).
    public override func contents(forType typeName: String) throws -> DocumentContents {
        guard let format = Self.format(forType: typeName) else {
            throw DocumentError.unsupportedFileType(typeName)
        }
        return .data(try Self.encodeFile(storedImage, as: format))
    }

    /// Decodes PNG, PPM or PGM data (detected from its first bytes).
    ///
    /// - Throws: ``DocumentError/contentsInvalid(_:)`` with the codec's message for data that is
    ///   not a valid image, or for a folder.
    public override func load(fromContents contents: DocumentContents, ofType typeName: String?) throws {
        guard case .data(let data) = contents else {
            throw DocumentError.contentsInvalid("“\(fileURL.lastPathComponent)” is a folder, not an image file")
        }
        storedImage = try Self.decodeFile(data, name: fileURL.lastPathComponent)
    }

    nonisolated static func message(_ error: any Error) -> String {
        var text = (error as? any LocalizedError)?.errorDescription ?? String(describing: error)
        // DocumentError.contentsInvalid adds its own final period.
        while text.hasSuffix(".") { text.removeLast() }
        return text
    }
}

