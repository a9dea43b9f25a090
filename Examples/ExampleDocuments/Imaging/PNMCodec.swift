import Foundation

/// Reads and writes Netpbm images: binary PPM (`P6`) and PGM (`P5`), and reads their ASCII
/// forms (`P3`, `P2`).
///
/// Reading accepts `#` comments in the header, any maxval from 1 to 65535 (samples are scaled
/// to 0…255 with rounding) and ignores bytes after the raster. Writing always uses maxval 255.
public enum PNMCodec {
    /// Decodes a P2, P3, P5 or P6 file.
    ///
    /// - Parameter maxPixelCount: larger images are refused before pixel memory is allocated.
    /// - Throws: ``ImageCodecError/notPNM`` for other data; ``ImageCodecError/truncated(_:)`` when
    ///   the header or raster is cut short; ``ImageCodecError/corrupt(_:)`` for a malformed
    ///   header, a maxval outside 1…65535 or a sample above maxval;
    ///   ``ImageCodecError/tooLarge(width:height:)``; ``ImageCodecError/unsupported(_:)`` for
    ///   the bitmap (`P1`, `P4`) and PAM (`P7`) variants.
    public static func decode(_ data: Data, maxPixelCount: Int = RGBAImage.maxPixelCount) throws -> RGBAImage {
        try decode([UInt8](data), maxPixelCount: maxPixelCount)
    }

    /// Decodes a P2, P3, P5 or P6 file held in `bytes`; errors as in ``decode(_:maxPixelCount:)``.
    public static func decode(_ bytes: [UInt8], maxPixelCount: Int = RGBAImage.maxPixelCount) throws -> RGBAImage {
        guard bytes.count >= 2 else {
            throw bytes.first == UInt8(ascii: "P") ? ImageCodecError.truncated("the file ends inside the magic number") : ImageCodecError.notPNM
        }
        guard bytes[0] == UInt8(ascii: "P") else { throw ImageCodecError.notPNM }
        let channels: Int, binary: Bool
        switch bytes[1] {
        case UInt8(ascii: "2"): (channels, binary) = (1, false)
        case UInt8(ascii: "3"): (channels, binary) = (3, false)
        case UInt8(ascii: "5"): (channels, binary) = (1, true)
        case UInt8(ascii: "6"): (channels, binary) = (3, true)
        case UInt8(ascii: "1"), UInt8(ascii: "4"): throw ImageCodecError.unsupported("PBM bitmaps (P1/P4); convert to PGM or PNG")
        case UInt8(ascii: "7"): throw ImageCodecError.unsupported("PAM (P7) files; convert to PPM or PNG")
        default: throw ImageCodecError.notPNM
        }
        var scanner = PNMScanner(bytes: bytes, offset: 2)
        guard scanner.atWhitespaceOrComment() else { throw ImageCodecError.notPNM }
        let width = try scanner.headerNumber("width")
        let height = try scanner.headerNumber("height")
        let maxval = try scanner.headerNumber("maxval")
        guard width >= 1, height >= 1 else { throw ImageCodecError.corrupt("the image size \(width) × \(height) is invalid") }
        guard width <= RGBAImage.maxDimension, height <= RGBAImage.maxDimension, width * height <= maxPixelCount else {
            throw ImageCodecError.tooLarge(width: width, height: height)
        }
        guard (1...65_535).contains(maxval) else { throw ImageCodecError.corrupt("maxval \(maxval) is outside 1…65535") }

        let samples = width * height * channels
        let sampleBytes = maxval > 255 ? 2 : 1
        // Check there is enough input before allocating: binary needs every byte, ASCII at least one digit each.
        if binary {
            // Exactly one whitespace byte separates maxval from the raster.
            guard scanner.offset < bytes.count else { throw ImageCodecError.truncated("the file ends before the pixel data") }
            scanner.offset += 1
            guard bytes.count - scanner.offset >= samples * sampleBytes else {
                throw ImageCodecError.truncated("the pixel data holds \(bytes.count - scanner.offset) of \(samples * sampleBytes) bytes")
            }
        } else if bytes.count - scanner.offset < samples {
            throw ImageCodecError.truncated("the file is too short for \(samples) ASCII samples")
        }

        var pixels = [UInt8](repeating: 255, count: width * height * 4)
        let start = scanner.offset
        try pixels.withUnsafeMutableBufferPointer { out in
            try bytes.withUnsafeBufferPointer { input in
                for index in 0..<samples {
                    let value: Int
                    if binary {
                        let at = start + index * sampleBytes
                        value = sampleBytes == 1 ? Int(input[at]) : Int(input[at]) << 8 | Int(input[at + 1])
                    } else {
                        value = try scanner.rasterNumber(sample: index)
                    }
                    guard value <= maxval else {
                        throw ImageCodecError.corrupt("sample \(index) is \(value), above the maxval \(maxval)")
                    }
                    let v = maxval == 255 ? UInt8(truncatingIfNeeded: value)
                                          : UInt8(truncatingIfNeeded: (value * 255 + maxval / 2) / maxval)
                    if channels == 1 {
                        let o = index * 4
                        out[o] = v; out[o + 1] = v; out[o + 2] = v
                    } else {
                        out[(index / 3) * 4 + index % 3] = v
                    }
                }
            }
        }
        return RGBAImage(uncheckedWidth: width, height: height, pixels: pixels)
    }

    /// Encodes `image` as binary PPM (`P6`, for ``ImageFormat/ppm``) or PGM (`P5`, for
    /// ``ImageFormat/pgm``; colours are converted to BT.601 luma). Alpha is dropped: Netpbm
    /// has no transparency in these formats.
    ///
    /// - Throws: ``ImageCodecError/unsupported(_:)`` for ``ImageFormat/png``;
    ///   ``ImageCodecError/pixelCountMismatch(expected:actual:)`` when `image.pixels` has the wrong size.
    public static func encode(_ image: RGBAImage, as format: ImageFormat) throws -> [UInt8] {
        guard image.pixels.count == image.width * image.height * 4 else {
            throw ImageCodecError.pixelCountMismatch(expected: image.width * image.height * 4, actual: image.pixels.count)
        }
        let gray: Bool
        switch format {
        case .ppm: gray = false
        case .pgm: gray = true
        case .png: throw ImageCodecError.unsupported("PNMCodec cannot write PNG; use PNGEncoder")
        }
        let header = Array("\(gray ? "P5" : "P6")\n\(image.width) \(image.height)\n255\n".utf8)
        let channels = gray ? 1 : 3
        var out = [UInt8](repeating: 0, count: header.count + image.pixelCount * channels)
        let source = gray ? image.grayscaled() : image
        out.withUnsafeMutableBufferPointer { dst in
            for (i, byte) in header.enumerated() { dst[i] = byte }
            source.pixels.withUnsafeBufferPointer { src in
                var o = header.count
                for p in 0..<image.pixelCount {
                    for c in 0..<channels { dst[o + c] = src[p * 4 + c] }
                    o += channels
                }
            }
        }
        return out
    }
}

/// Tokeniser for Netpbm headers and ASCII rasters.
struct PNMScanner {
    let bytes: [UInt8]
    var offset: Int

    static func isWhitespace(_ b: UInt8) -> Bool { b == 0x20 || (0x09...0x0D).contains(b) }

    func atWhitespaceOrComment() -> Bool {
        offset < bytes.count && (Self.isWhitespace(bytes[offset]) || bytes[offset] == UInt8(ascii: "#"))
    }

    /// Skips whitespace and `#` comments (which run to the end of the line).
    mutating func skipSeparators() {
        while offset < bytes.count {
            if Self.isWhitespace(bytes[offset]) {
                offset += 1
            } else if bytes[offset] == UInt8(ascii: "#") {
                while offset < bytes.count && bytes[offset] != 0x0A && bytes[offset] != 0x0D { offset += 1 }
            } else {
                return
            }
        }
    }

    /// Reads an unsigned decimal number; values are capped so they cannot overflow.
    mutating func number() -> Int? {
        skipSeparators()
        var value = 0, digits = 0
        while offset < bytes.count, (0x30...0x39).contains(bytes[offset]) {
            value = min(value * 10 + Int(bytes[offset] - 0x30), 1 << 40)
            offset += 1
            digits += 1
        }
        return digits > 0 ? value : nil
    }

    /// A header field, which must be followed by whitespace or a comment.
    mutating func headerNumber(_ field: String) throws -> Int {
        guard let value = number() else {
            if offset >= bytes.count { throw ImageCodecError.truncated("the header ends before the \(field)") }
            throw ImageCodecError.corrupt("the header's \(field) is not a number")
        }
        guard offset < bytes.count else { throw ImageCodecError.truncated("the file ends after the \(field)") }
        guard atWhitespaceOrComment() else { throw ImageCodecError.corrupt("the header's \(field) is followed by an unexpected character") }
        return value
    }

    mutating func rasterNumber(sample: Int) throws -> Int {
        guard let value = number() else {
            if offset >= bytes.count { throw ImageCodecError.truncated("the pixel data ends at sample \(sample)") }
            throw ImageCodecError.corrupt("sample \(sample) is not a number")
        }
        return value
    }
}
