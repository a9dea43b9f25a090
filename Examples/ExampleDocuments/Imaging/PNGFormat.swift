// Constants and header arithmetic shared by the PNG decoder and encoder (PNG spec, 3rd edition).

enum PNGFormat {
    /// The 8 bytes every PNG file starts with.
    static let signature: [UInt8] = [137, 80, 78, 71, 13, 10, 26, 10]

    /// Chunk types as big-endian 32-bit values.
    enum ChunkType {
        static let IHDR: UInt32 = 0x4948_4452
        static let PLTE: UInt32 = 0x504C_5445
        static let IDAT: UInt32 = 0x4944_4154
        static let IEND: UInt32 = 0x4945_4E44
        static let tRNS: UInt32 = 0x7452_4E53

        /// The four ASCII letters of a chunk type, for error messages (never fails).
        static func name(_ type: UInt32) -> String {
            let bytes = [UInt8(truncatingIfNeeded: type >> 24), UInt8(truncatingIfNeeded: type >> 16),
                         UInt8(truncatingIfNeeded: type >> 8), UInt8(truncatingIfNeeded: type)]
            let printable = bytes.map { (0x20..<0x7F).contains($0) ? $0 : UInt8(ascii: "?") }
            return String(decoding: printable, as: UTF8.self)
        }
    }

    /// Largest chunk length allowed by the PNG spec (2³¹ - 1).
    static let maxChunkLength = 0x7FFF_FFFF

    /// The seven Adam7 passes: start column, start row, column step, row step.
    static let adam7: [(x: Int, y: Int, dx: Int, dy: Int)] = [
        (0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2),
    ]
}

/// The validated contents of an IHDR chunk.
struct PNGHeader: Equatable, Sendable {
    enum ColorType: UInt8, Sendable {
        case gray = 0, rgb = 2, palette = 3, grayAlpha = 4, rgba = 6

        var channels: Int {
            switch self {
            case .gray, .palette: return 1
            case .grayAlpha: return 2
            case .rgb: return 3
            case .rgba: return 4
            }
        }

        func allows(bitDepth: Int) -> Bool {
            switch self {
            case .gray: return [1, 2, 4, 8, 16].contains(bitDepth)
            case .palette: return [1, 2, 4, 8].contains(bitDepth)
            case .rgb, .grayAlpha, .rgba: return bitDepth == 8 || bitDepth == 16
            }
        }
    }

    var width: Int
    var height: Int
    var bitDepth: Int
    var colorType: ColorType
    var interlaced: Bool

    var bitsPerPixel: Int { bitDepth * colorType.channels }
    /// Distance in bytes to the corresponding byte of the previous pixel, for filtering (≥ 1).
    var filterStride: Int { max(1, bitsPerPixel / 8) }

    /// Bytes of one scanline of `pixels` pixels, without the filter-type byte.
    func rowBytes(pixels: Int) -> Int { (pixels * bitsPerPixel + 7) / 8 }

    /// Sub-image sizes of the passes that exist: one full pass, or the non-empty Adam7 passes.
    func passes() -> [(x: Int, y: Int, dx: Int, dy: Int, width: Int, height: Int)] {
        guard interlaced else { return [(0, 0, 1, 1, width, height)] }
        return PNGFormat.adam7.compactMap { pass in
            let w = width > pass.x ? (width - pass.x + pass.dx - 1) / pass.dx : 0
            let h = height > pass.y ? (height - pass.y + pass.dy - 1) / pass.dy : 0
            return w > 0 && h > 0 ? (pass.x, pass.y, pass.dx, pass.dy, w, h) : nil
        }
    }

    /// Size of the decompressed image data (all passes, including each row's filter byte).
    var decompressedSize: Int {
        passes().reduce(0) { $0 + $1.height * (1 + rowBytes(pixels: $1.width)) }
    }
}
