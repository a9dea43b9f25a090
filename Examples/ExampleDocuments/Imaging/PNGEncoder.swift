import CZlib
import Foundation

/// Encodes ``RGBAImage`` values as PNG files.
///
/// Picks the smallest lossless 8-bit colour type: grey (0) when every pixel is grey and opaque,
/// grey+alpha (4) when grey with transparency, RGB (2) when opaque, RGBA (6) otherwise. Each
/// scanline gets the filter with the smallest sum of absolute differences, and the result is
/// compressed with zlib's DEFLATE (see ``encode(_:compressionLevel:)`` for the strategy).
public enum PNGEncoder {
    /// Largest IDAT chunk written (the data is split into chunks of this size).
    static let idatChunkSize = 1 << 20

    /// Encodes `image` as PNG bytes.
    ///
    /// - Parameter compressionLevel: zlib level, 0 (no compression) … 9. From 1 to 7 the
    ///   encoder uses zlib's fast run-length strategy and adds a full LZ77 pass only for
    ///   images that compress well (synthetic content, where it pays off and is cheap); 8 and 9
    ///   always try both and keep the smaller.
    /// - Throws: ``ImageCodecError/invalidDimensions(width:height:)`` or
    ///   ``ImageCodecError/pixelCountMismatch(expected:actual:)`` when `image.pixels` was edited
    ///   into an inconsistent state; ``ImageCodecError/compressionFailed(_:)`` for a level
    ///   outside 0…9 or when zlib runs out of memory.
    public static func encode(_ image: RGBAImage, compressionLevel: Int = 6) throws -> [UInt8] {
        try RGBAImage.validate(width: image.width, height: image.height)
        guard image.pixels.count == image.width * image.height * 4 else {
            throw ImageCodecError.pixelCountMismatch(expected: image.width * image.height * 4, actual: image.pixels.count)
        }
        guard (0...9).contains(compressionLevel) else {
            throw ImageCodecError.compressionFailed("compression level \(compressionLevel) is not in 0…9")
        }
        let colorType = chooseColorType(image)
        let header = PNGHeader(width: image.width, height: image.height, bitDepth: 8, colorType: colorType, interlaced: false)
        let filtered = filteredScanlines(image, header: header)
        let compressed = try compress(filtered, level: compressionLevel)

        var out = [UInt8]()
        out.reserveCapacity(compressed.count + 128 + 12 * (compressed.count / idatChunkSize + 1))
        out.append(contentsOf: PNGFormat.signature)
        var ihdr = [UInt8]()
        appendUInt32(UInt32(image.width), to: &ihdr)
        appendUInt32(UInt32(image.height), to: &ihdr)
        ihdr += [8, colorType.rawValue, 0, 0, 0]
        appendChunk(PNGFormat.ChunkType.IHDR, ihdr[...], to: &out)
        var start = 0
        repeat {
            let end = min(start + idatChunkSize, compressed.count)
            appendChunk(PNGFormat.ChunkType.IDAT, compressed[start..<end], to: &out)
            start = end
        } while start < compressed.count
        appendChunk(PNGFormat.ChunkType.IEND, [][...], to: &out)
        return out
    }

    /// Encodes `image` as PNG; same behaviour and errors as ``encode(_:compressionLevel:)``.
    public static func encodeData(_ image: RGBAImage, compressionLevel: Int = 6) throws -> Data {
        Data(try encode(image, compressionLevel: compressionLevel))
    }

    // MARK: Internals

    /// DEFLATE with a strategy chosen per image. Run-length matching (`Z_RLE`) is several times
    /// faster than full LZ77 and on photographic content compresses as well or better; on
    /// synthetic content (flat areas, text, repeated patterns) LZ77 wins by a lot. So: RLE
    /// first, and if that already shrinks the data below a quarter (typical of synthetic
    /// images, where LZ77 also runs fast) or the caller asked for level 8+, LZ77 as well,
    /// keeping the smaller result.
    static func compress(_ filtered: [UInt8], level: Int) throws -> [UInt8] {
        let zlibLevel = Int32(level)
        guard level > 0 else { return try Zlib.compress(filtered, level: 0) }
        let rle = try Zlib.compress(filtered, level: zlibLevel, strategy: Z_RLE)
        guard level >= 8 || rle.count * 4 < filtered.count else { return rle }
        let lz77 = try Zlib.compress(filtered, level: zlibLevel, strategy: Z_DEFAULT_STRATEGY)
        return lz77.count < rle.count ? lz77 : rle
    }

    static func chooseColorType(_ image: RGBAImage) -> PNGHeader.ColorType {
        var opaque = true, gray = true
        image.pixels.withUnsafeBufferPointer { p in
            var i = 0
            while i + 3 < p.count && (opaque || gray) {
                if p[i + 3] != 255 { opaque = false }
                if p[i] != p[i + 1] || p[i] != p[i + 2] { gray = false }
                i += 4
            }
        }
        switch (gray, opaque) {
        case (true, true): return .gray
        case (true, false): return .grayAlpha
        case (false, true): return .rgb
        case (false, false): return .rgba
        }
    }

    /// Packs each row to the chosen colour type and filters it; returns `height * (1 + rowBytes)` bytes.
    static func filteredScanlines(_ image: RGBAImage, header: PNGHeader) -> [UInt8] {
        let channels = header.colorType.channels
        let rowBytes = header.rowBytes(pixels: image.width)
        var out = [UInt8](repeating: 0, count: image.height * (rowBytes + 1))
        // Two packed-row buffers (current, previous), used when the colour type is not RGBA.
        var rows = [UInt8](repeating: 0, count: rowBytes * 3)
        image.pixels.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                rows.withUnsafeMutableBufferPointer { scratch in
                    guard let s = src.baseAddress, let d = dst.baseAddress, let buffers = scratch.baseAddress else { return }
                    let zeroRow = UnsafePointer(buffers + 2 * rowBytes)
                    var previous: UnsafePointer<UInt8> = zeroRow
                    for y in 0..<image.height {
                        let rgba = s + y * image.width * 4
                        let current: UnsafePointer<UInt8>
                        if channels == 4 {
                            current = rgba
                        } else {
                            let packed = buffers + (y & 1) * rowBytes
                            pack(rgba, count: image.width, channels: channels, into: packed)
                            current = UnsafePointer(packed)
                        }
                        PNGFilters.filterRow(current, prev: previous, rowBytes: rowBytes, bpp: channels,
                                             into: d + y * (rowBytes + 1))
                        previous = current
                    }
                }
            }
        }
        return out
    }

    /// Drops the channels the colour type does not store (1 = grey, 2 = grey+alpha, 3 = RGB).
    private static func pack(_ rgba: UnsafePointer<UInt8>, count: Int, channels: Int, into out: UnsafeMutablePointer<UInt8>) {
        switch channels {
        case 1:
            for i in 0..<count { out[i] = rgba[i * 4] }
        case 2:
            for i in 0..<count { out[i * 2] = rgba[i * 4]; out[i * 2 + 1] = rgba[i * 4 + 3] }
        default:
            for i in 0..<count {
                out[i * 3] = rgba[i * 4]; out[i * 3 + 1] = rgba[i * 4 + 1]; out[i * 3 + 2] = rgba[i * 4 + 2]
            }
        }
    }

    private static func appendUInt32(_ value: UInt32, to out: inout [UInt8]) {
        out.append(UInt8(truncatingIfNeeded: value >> 24))
        out.append(UInt8(truncatingIfNeeded: value >> 16))
        out.append(UInt8(truncatingIfNeeded: value >> 8))
        out.append(UInt8(truncatingIfNeeded: value))
    }

    /// Appends length, type, data and the CRC-32 of type + data.
    private static func appendChunk(_ type: UInt32, _ data: ArraySlice<UInt8>, to out: inout [UInt8]) {
        appendUInt32(UInt32(data.count), to: &out)
        let typeStart = out.count
        appendUInt32(type, to: &out)
        out.append(contentsOf: data)
        let crc = out.withUnsafeBytes { Zlib.crc32(UnsafeRawBufferPointer(rebasing: $0[typeStart...])) }
        appendUInt32(crc, to: &out)
    }
}
