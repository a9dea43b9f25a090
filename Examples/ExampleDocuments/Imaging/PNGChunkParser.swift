// Splits a PNG file into its chunks, verifies each CRC and the chunk order, validates IHDR and
// collects what decoding needs (header, palette, transparency, concatenated IDAT payloads).

enum PNGChunkParser {
    struct Result {
        var header: PNGHeader
        var palette: [UInt8]
        var transparency: [UInt8]?
        var imageData: [UInt8]
    }

    /// - Throws: every structural ``ImageCodecError`` listed on ``PNGDecoder``.
    static func parse(_ bytes: [UInt8], maxPixelCount: Int) throws -> Result {
        let signature = PNGFormat.signature
        guard bytes.count >= signature.count else {
            if !bytes.isEmpty, signature.starts(with: bytes) { throw ImageCodecError.truncated("the file ends inside the PNG signature") }
            throw bytes.isEmpty ? ImageCodecError.truncated("the file is empty") : ImageCodecError.notPNG
        }
        guard bytes.starts(with: signature) else { throw ImageCodecError.notPNG }

        var header: PNGHeader?
        var palette: [UInt8]?
        var transparency: [UInt8]?
        var idat: [Range<Int>] = []
        var idatClosed = false
        var offset = signature.count

        while true {
            guard bytes.count - offset >= 12 else {
                throw ImageCodecError.truncated(offset == bytes.count
                    ? "the file ends before the IEND chunk" : "the file ends inside a chunk header at byte \(offset)")
            }
            let length = Int(readUInt32(bytes, offset))
            let type = readUInt32(bytes, offset + 4)
            let name = PNGFormat.ChunkType.name(type)
            guard (offset + 4..<offset + 8).allSatisfy({ isASCIILetter(bytes[$0]) }) else {
                throw ImageCodecError.corrupt("invalid chunk type \"\(name)\" at byte \(offset + 4)")
            }
            guard length <= PNGFormat.maxChunkLength else {
                throw ImageCodecError.corrupt("chunk \(name) claims an impossible length of \(length) bytes")
            }
            guard bytes.count - offset - 12 >= length else {
                throw ImageCodecError.truncated("the file ends inside the \(length)-byte chunk \(name)")
            }
            let data = offset + 8..<offset + 8 + length
            let stored = readUInt32(bytes, data.upperBound)
            let actual = bytes.withUnsafeBytes { Zlib.crc32(UnsafeRawBufferPointer(rebasing: $0[offset + 4..<data.upperBound])) }
            guard stored == actual else { throw ImageCodecError.checksumMismatch(chunk: name) }
            offset = data.upperBound + 4

            if header == nil && type != PNGFormat.ChunkType.IHDR {
                throw ImageCodecError.corrupt("the first chunk is \(name), but a PNG must start with IHDR")
            }
            if !idat.isEmpty && type != PNGFormat.ChunkType.IDAT { idatClosed = true }

            switch type {
            case PNGFormat.ChunkType.IHDR:
                guard header == nil else { throw ImageCodecError.corrupt("the file has more than one IHDR chunk") }
                header = try parseHeader(bytes[data], maxPixelCount: maxPixelCount)
            case PNGFormat.ChunkType.PLTE:
                guard palette == nil else { throw ImageCodecError.corrupt("the file has more than one PLTE chunk") }
                guard idat.isEmpty else { throw ImageCodecError.corrupt("the PLTE chunk comes after the image data") }
                guard length % 3 == 0, (3...768).contains(length) else {
                    throw ImageCodecError.corrupt("the PLTE chunk has \(length) bytes; it needs 1 to 256 RGB entries")
                }
                palette = Array(bytes[data])
            case PNGFormat.ChunkType.tRNS:
                guard idat.isEmpty else { throw ImageCodecError.corrupt("the tRNS chunk comes after the image data") }
                if header?.colorType == .palette && palette == nil {
                    throw ImageCodecError.corrupt("the tRNS chunk comes before the PLTE chunk")
                }
                transparency = Array(bytes[data])
            case PNGFormat.ChunkType.IDAT:
                guard !idatClosed else { throw ImageCodecError.corrupt("the IDAT chunks are not consecutive") }
                if header?.colorType == .palette && palette == nil {
                    throw ImageCodecError.corrupt("the palette image has no PLTE chunk")
                }
                idat.append(data)
            case PNGFormat.ChunkType.IEND:
                guard let header else { throw ImageCodecError.corrupt("IEND before IHDR") }
                guard !idat.isEmpty else { throw ImageCodecError.corrupt("the file has no IDAT (image data) chunk") }
                var imageData = [UInt8]()
                imageData.reserveCapacity(idat.reduce(0) { $0 + $1.count })
                for range in idat { imageData.append(contentsOf: bytes[range]) }
                return Result(header: header, palette: palette ?? [], transparency: transparency, imageData: imageData)
            default:
                // Bit 5 of the first letter clear = critical: we must understand it to decode.
                if bytes[data.lowerBound - 4] & 0x20 == 0 {
                    throw ImageCodecError.unsupported("the critical PNG chunk \(name)")
                }
            }
        }
    }

    /// Validates the 13-byte IHDR payload.
    private static func parseHeader(_ data: ArraySlice<UInt8>, maxPixelCount: Int) throws -> PNGHeader {
        guard data.count == 13 else { throw ImageCodecError.corrupt("the IHDR chunk has \(data.count) bytes instead of 13") }
        let base = data.startIndex
        let width = Int(readUInt32(data, base)), height = Int(readUInt32(data, base + 4))
        let bitDepth = Int(data[base + 8])
        guard width >= 1, height >= 1, width <= PNGFormat.maxChunkLength, height <= PNGFormat.maxChunkLength else {
            throw ImageCodecError.corrupt("the image size \(width) × \(height) is invalid")
        }
        guard width <= RGBAImage.maxDimension, height <= RGBAImage.maxDimension, width * height <= maxPixelCount else {
            throw ImageCodecError.tooLarge(width: width, height: height)
        }
        guard let colorType = PNGHeader.ColorType(rawValue: data[base + 9]) else {
            throw ImageCodecError.corrupt("colour type \(data[base + 9]) is not defined by PNG")
        }
        guard colorType.allows(bitDepth: bitDepth) else {
            throw ImageCodecError.corrupt("bit depth \(bitDepth) is not allowed for colour type \(colorType.rawValue)")
        }
        guard data[base + 10] == 0 else { throw ImageCodecError.corrupt("unknown compression method \(data[base + 10])") }
        guard data[base + 11] == 0 else { throw ImageCodecError.corrupt("unknown filter method \(data[base + 11])") }
        guard data[base + 12] <= 1 else { throw ImageCodecError.corrupt("unknown interlace method \(data[base + 12])") }
        return PNGHeader(width: width, height: height, bitDepth: bitDepth, colorType: colorType, interlaced: data[base + 12] == 1)
    }

    private static func isASCIILetter(_ byte: UInt8) -> Bool {
        (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
    }

    /// Big-endian UInt32 at `index`; callers have checked that four bytes are there.
    private static func readUInt32<C: RandomAccessCollection>(_ bytes: C, _ index: Int) -> UInt32 where C.Element == UInt8, C.Index == Int {
        UInt32(bytes[index]) << 24 | UInt32(bytes[index + 1]) << 16 | UInt32(bytes[index + 2]) << 8 | UInt32(bytes[index + 3])
    }
}
