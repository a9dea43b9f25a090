import CloudDocuments
import Foundation

/// The file formats of ``ImageDocument`` without a document: for a program that changes an image
/// file inside one coordinated write (``CoordinatedFileEdit``) instead of opening, editing and
/// closing a document, and must read and write the bytes exactly as the document does.
extension ImageDocument {
    /// The image in a file's bytes, as opening a document reads it: PNG, PPM or PGM, detected from
    /// the first bytes (not from the name).
    ///
    /// - Parameters:
    ///   - data: The file's bytes.
    ///   - name: The file's name, for the error message.
    /// - Throws: ``DocumentError/contentsInvalid(_:)`` with the codec's message for data that is
    ///   not a valid image (opening a document wraps this in
    ///   ``DocumentError/couldNotLoad(_:underlying:)``). Never crashes on bad input.
    ///
    /// Pure; any thread.
    public nonisolated static func decodeFile(_ data: Data, name: String) throws -> RGBAImage {
        do {
            return try ImageCodec.decode(data)
        } catch {
            throw DocumentError.contentsInvalid("“\(name)” is not a readable image: \(message(error))")
        }
    }

    /// The bytes a document saves for `image` in `format` (a document saves in the format its
    /// file's extension names: ``ImageFormat/init(url:)``). PPM and PGM drop alpha; PGM stores gray.
    ///
    /// - Throws: ``DocumentError/contentsInvalid(_:)`` when the encoder fails (an image edited
    ///   into an inconsistent state).
    ///
    /// Pure; any thread.
    public nonisolated static func encodeFile(_ image: RGBAImage, as format: ImageFormat) throws -> Data {
        do {
            return try ImageCodec.encode(image, as: format)
        } catch {
            throw DocumentError.contentsInvalid("the image could not be encoded as \(format.rawValue.uppercased()): \(message(error))")
        }
    }
}
