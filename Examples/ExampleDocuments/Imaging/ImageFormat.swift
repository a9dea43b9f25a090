import Foundation

/// The image file formats the codecs in this module read and write.
public enum ImageFormat: String, Sendable, CaseIterable {
    /// Portable Network Graphics (lossless, with alpha).
    case png
    /// Netpbm pixmap: RGB without alpha (`P6` written; `P3`/`P6` read).
    case ppm
    /// Netpbm greymap: grey without alpha (`P5` written; `P2`/`P5` read).
    case pgm

    /// The format for a file extension (case-insensitive, with or without the dot):
    /// `png`; `ppm` or `pnm`; `pgm`. Returns `nil` for anything else.
    public init?(fileExtension: String) {
        var ext = fileExtension.lowercased()
        if ext.hasPrefix(".") { ext.removeFirst() }
        switch ext {
        case "png": self = .png
        case "ppm", "pnm": self = .ppm
        case "pgm": self = .pgm
        default: return nil
        }
    }

    /// The format named by `url`'s path extension, or `nil` when it is not a known one.
    public init?(url: URL) {
        self.init(fileExtension: url.pathExtension)
    }

    /// Detects the format from the first bytes (PNG signature, or Netpbm `P2`/`P3`/`P5`/`P6`
    /// followed by whitespace). Returns `nil` when the data matches none of them; this only
    /// looks at the magic number, so the rest may still be invalid.
    public init?(magicBytes data: some Collection<UInt8>) {
        let head = Array(data.prefix(8))
        if head.count >= 4, head.starts(with: PNGFormat.signature.prefix(4)) {
            self = .png
            return
        }
        guard head.count >= 2, head[0] == UInt8(ascii: "P") else { return nil }
        if head.count >= 3, !(head[2] == 0x20 || (0x09...0x0D).contains(head[2]) || head[2] == UInt8(ascii: "#")) {
            return nil
        }
        switch head[1] {
        case UInt8(ascii: "3"), UInt8(ascii: "6"): self = .ppm
        case UInt8(ascii: "2"), UInt8(ascii: "5"): self = .pgm
        default: return nil
        }
    }

    /// The usual file extension (without the dot).
    public var fileExtension: String { rawValue }

    /// The MIME type: `image/png`, `image/x-portable-pixmap` or `image/x-portable-graymap`.
    public var mimeType: String {
        switch self {
        case .png: return "image/png"
        case .ppm: return "image/x-portable-pixmap"
        case .pgm: return "image/x-portable-graymap"
        }
    }
}

/// One entry point for reading and writing images in any ``ImageFormat``.
public enum ImageCodec {
    /// Decodes PNG, PPM or PGM data, detecting the format from its first bytes (the file name
    /// is not consulted, so a mislabelled file still opens).
    ///
    /// - Throws: ``ImageCodecError/unknownFormat`` when the data is none of them, otherwise
    ///   the errors of ``PNGDecoder`` or ``PNMCodec``.
    public static func decode(_ data: Data) throws -> RGBAImage {
        let bytes = [UInt8](data)
        switch ImageFormat(magicBytes: bytes) {
        case .png: return try PNGDecoder.decode(bytes)
        case .ppm, .pgm: return try PNMCodec.decode(bytes)
        case nil:
            if bytes.isEmpty { throw ImageCodecError.truncated("the file is empty") }
            throw ImageCodecError.unknownFormat
        }
    }

    /// Encodes `image` in `format`. PPM and PGM drop alpha; PGM stores BT.601 luma.
    ///
    /// - Throws: ``ImageCodecError/pixelCountMismatch(expected:actual:)`` or
    ///   ``ImageCodecError/invalidDimensions(width:height:)`` when `image.pixels` was edited
    ///   into an inconsistent state; ``ImageCodecError/compressionFailed(_:)`` when zlib fails.
    public static func encode(_ image: RGBAImage, as format: ImageFormat) throws -> Data {
        switch format {
        case .png: return Data(try PNGEncoder.encode(image))
        case .ppm, .pgm: return Data(try PNMCodec.encode(image, as: format))
        }
    }
}
