import Foundation

/// Decodes PNG files to ``RGBAImage``.
///
/// Supports every colour type (grey, RGB, palette, grey+alpha, RGBA) at every bit depth PNG
/// allows (1/2/4/8/16; 16-bit samples are rounded to 8 bits), palette and colour-key
/// transparency (tRNS), all five filter types and Adam7 interlacing. Ancillary chunks other
/// than tRNS (gamma, colour profiles, text…) are checked for integrity and then ignored.
///
/// The decoder is strict: every chunk's CRC is verified, and any damage, however small, makes
/// it throw an ``ImageCodecError`` rather than return a partly wrong picture. It never traps on
/// malformed input, and memory for pixels is only allocated after the header's size has been
/// checked against `maxPixelCount` and the compressed data has actually been inflated.
public enum PNGDecoder {
    /// Decodes a PNG file held in `data`.
    ///
    /// - Throws: the same errors as the `[UInt8]` overload below.
    public static func decode(_ data: Data, maxPixelCount: Int = RGBAImage.maxPixelCount) throws -> RGBAImage {
        try decode([UInt8](data), maxPixelCount: maxPixelCount)
    }

    /// Decodes a PNG file held in `bytes`.
    ///
    /// - Parameter maxPixelCount: images with more pixels are refused before any pixel memory
    ///   is allocated.
    /// - Throws: ``ImageCodecError/notPNG`` (no signature), ``ImageCodecError/truncated(_:)``
    ///   (file or compressed stream cut short), ``ImageCodecError/checksumMismatch(chunk:)``,
    ///   ``ImageCodecError/corrupt(_:)`` (invalid header, chunk order, filter type, palette index,
    ///   compressed data…), ``ImageCodecError/tooLarge(width:height:)``,
    ///   ``ImageCodecError/decompressedDataTooLarge(limit:)`` (more data than the header allows),
    ///   ``ImageCodecError/unsupported(_:)`` (an unknown critical chunk).
    public static func decode(_ bytes: [UInt8], maxPixelCount: Int = RGBAImage.maxPixelCount) throws -> RGBAImage {
        let parsed = try PNGChunkParser.parse(bytes, maxPixelCount: maxPixelCount)
        let header = parsed.header
        let expected = header.decompressedSize
        var raw = try Zlib.decompress(parsed.imageData, expectedSize: expected)
        guard raw.count == expected else {
            throw ImageCodecError.truncated("the image data holds \(raw.count) of the \(expected) bytes the header describes")
        }
        let expander = PNGPixelExpander(header: header, palette: parsed.palette, transparency: parsed.transparency)
        var pixels = [UInt8](repeating: 0, count: header.width * header.height * 4)
        try raw.withUnsafeMutableBufferPointer { rawBuffer in
            try pixels.withUnsafeMutableBufferPointer { outBuffer in
                guard let rawBase = rawBuffer.baseAddress, let outBase = outBuffer.baseAddress else { return }
                var offset = 0
                for pass in header.passes() {
                    let rowBytes = header.rowBytes(pixels: pass.width)
                    let passData = rawBase + offset
                    try PNGFilters.unfilter(passData, rows: pass.height, rowBytes: rowBytes, bpp: header.filterStride)
                    for row in 0..<pass.height {
                        let y = pass.y + row * pass.dy
                        try expander.expand(passData + row * (rowBytes + 1) + 1, count: pass.width,
                                            into: outBase + (y * header.width + pass.x) * 4, step: pass.dx * 4)
                    }
                    offset += pass.height * (rowBytes + 1)
                }
            }
        }
        return RGBAImage(uncheckedWidth: header.width, height: header.height, pixels: pixels)
    }
}
