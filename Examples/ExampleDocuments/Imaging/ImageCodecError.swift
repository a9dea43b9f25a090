import Foundation

/// Everything that can go wrong while building, decoding or encoding an ``RGBAImage``.
///
/// Every decoder in this module reports malformed input with one of these cases instead of
/// crashing; ``errorDescription`` says what is wrong and ``recoverySuggestion`` what to do.
public enum ImageCodecError: Error, Equatable, LocalizedError {
    /// The data does not start with the 8-byte PNG signature.
    case notPNG
    /// The data does not start with a supported Netpbm magic number (`P2`, `P3`, `P5`, `P6`).
    case notPNM
    /// The data is neither PNG nor PPM/PGM (detected from its first bytes).
    case unknownFormat
    /// The data ends before the named part is complete (for example a cut-off download).
    case truncated(String)
    /// The data is structurally invalid; the associated text names the part.
    case corrupt(String)
    /// The file is valid but uses a feature this codec does not implement.
    case unsupported(String)
    /// The CRC-32 stored after the named PNG chunk does not match its contents.
    case checksumMismatch(chunk: String)
    /// The image is larger than the decoder's limit (checked before any pixel memory is allocated).
    case tooLarge(width: Int, height: Int)
    /// Width or height is below 1 or above ``RGBAImage/maxDimension``.
    case invalidDimensions(width: Int, height: Int)
    /// The pixel buffer does not hold exactly `width * height * 4` bytes.
    case pixelCountMismatch(expected: Int, actual: Int)
    /// A crop rectangle or pixel coordinate lies (partly) outside the image.
    case outOfBounds(String)
    /// Compressed data inflates to more bytes than the image header allows (a "zip bomb").
    case decompressedDataTooLarge(limit: Int)
    /// zlib itself failed (out of memory or an internal error); the text is zlib's message.
    case compressionFailed(String)

    /// What went wrong, in one sentence for a person (never `nil`).
    public var errorDescription: String? {
        switch self {
        case .notPNG:
            return "The data is not a PNG image (the PNG signature is missing)."
        case .notPNM:
            return "The data is not a binary or ASCII PPM/PGM image (expected P2, P3, P5 or P6)."
        case .unknownFormat:
            return "The image format was not recognised; only PNG, PPM and PGM are supported."
        case .truncated(let part):
            return "The image data ends too early: \(part)."
        case .corrupt(let part):
            return "The image data is damaged: \(part)."
        case .unsupported(let feature):
            return "The image uses an unsupported feature: \(feature)."
        case .checksumMismatch(let chunk):
            return "The checksum of the PNG chunk \(chunk) is wrong; the file is damaged."
        case .tooLarge(let width, let height):
            return "The image is too large to open (\(width) × \(height) pixels)."
        case .invalidDimensions(let width, let height):
            return "\(width) × \(height) is not a valid image size (each side must be 1…\(RGBAImage.maxDimension))."
        case .pixelCountMismatch(let expected, let actual):
            return "The pixel buffer holds \(actual) bytes but \(expected) are needed (4 per pixel)."
        case .outOfBounds(let what):
            return "Out of bounds: \(what)."
        case .decompressedDataTooLarge(let limit):
            return "The compressed image data expands beyond the \(limit) bytes its header allows."
        case .compressionFailed(let message):
            return "zlib failed: \(message)."
        }
    }

    /// What the person can do about it (never `nil`).
    public var recoverySuggestion: String? {
        switch self {
        case .notPNG, .notPNM, .unknownFormat:
            return "Open a PNG, PPM (P3/P6) or PGM (P2/P5) file, or convert the image to PNG first."
        case .truncated:
            return "The file is incomplete: copy or download it again."
        case .corrupt, .checksumMismatch, .decompressedDataTooLarge:
            return "The file is damaged: restore it from a backup or export it again from the original application."
        case .unsupported:
            return "Re-save the image as an 8-bit RGB or RGBA PNG and try again."
        case .tooLarge:
            return "Scale the image down (at most \(RGBAImage.maxDimension) pixels per side and \(RGBAImage.maxPixelCount) pixels in total) and try again."
        case .invalidDimensions, .pixelCountMismatch:
            return "Pass a width and height between 1 and \(RGBAImage.maxDimension) and exactly width × height × 4 bytes."
        case .outOfBounds:
            return "Choose a rectangle that lies completely inside the image."
        case .compressionFailed:
            return "Free some memory and try again."
        }
    }
}
