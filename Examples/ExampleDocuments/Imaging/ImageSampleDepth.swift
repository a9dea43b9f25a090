/// How many bits each channel of a stored image has, read from the file's header alone (the
/// decoders turn every image into 8 bits per channel RGBA, so the depth of the file itself is
/// known only from its header).
///
/// Used to say what a file holds (`image-tool info`) and to tell that saving an image read from a
/// file with more than 8 bits per channel keeps only the top 8 (every encoder here writes 8).
public struct ImageSampleDepth: Sendable, Equatable, CustomStringConvertible {
    /// The format the header belongs to.
    public let format: ImageFormat
    /// Bits per channel (per palette index for a palette PNG): 1, 2, 4, 8 or 16 for PNG; for
    /// Netpbm the bits needed for its maxval (8 for 255, 16 for 65535, 10 for 1023).
    public let bitsPerChannel: Int
    /// The channels: "gray", "gray + alpha", "RGB", "RGBA" or "palette".
    public let channels: String
    /// A Netpbm file's maxval (the largest sample value); `nil` for PNG.
    public let maxValue: Int?

    /// "16 bits per channel, RGB", "4 bits per pixel, palette",
    /// "10 bits per channel (maxval 1023), gray".
    public var description: String {
        let unit = channels == "palette" ? "pixel" : "channel"
        let bits = "\(bitsPerChannel) bit\(bitsPerChannel == 1 ? "" : "s") per \(unit)"
        if let maxValue, maxValue != 255, maxValue != 65_535 {
            return "\(bits) (maxval \(maxValue)), \(channels)"
        }
        return "\(bits), \(channels)"
    }

    /// `true` when the file holds more than 8 bits per channel, which an 8-bit save reduces.
    public var exceedsEightBits: Bool { bitsPerChannel > 8 }

    /// Reads the depth from the first bytes of a PNG (its IHDR chunk: 26 bytes) or Netpbm file
    /// (its header: magic number, width, height, maxval, with comments). Returns `nil` when the
    /// bytes are not such a header or end too early; never traps on any input.
    public init?(header bytes: some Collection<UInt8>) {
        let head = Array(bytes.prefix(4096))
        switch ImageFormat(magicBytes: head) {
        case .png?:
            // Signature (8), IHDR length (4), "IHDR" (4), width (4), height (4), depth, colour type.
            guard head.count >= 26, head.starts(with: PNGFormat.signature),
                  head[12..<16].elementsEqual("IHDR".utf8),
                  let colour = PNGHeader.ColorType(rawValue: head[25]),
                  colour.allows(bitDepth: Int(head[24])) else { return nil }
            format = .png
            bitsPerChannel = Int(head[24])
            switch colour {
            case .gray: channels = "gray"
            case .grayAlpha: channels = "gray + alpha"
            case .rgb: channels = "RGB"
            case .rgba: channels = "RGBA"
            case .palette: channels = "palette"
            }
            maxValue = nil
        case let netpbm?:
            var scanner = PNMScanner(bytes: head, offset: 2)
            guard scanner.atWhitespaceOrComment(),
                  (try? scanner.headerNumber("width")) != nil,
                  (try? scanner.headerNumber("height")) != nil,
                  let maxval = try? scanner.headerNumber("maxval"),
                  (1...65_535).contains(maxval) else { return nil }
            format = netpbm
            channels = netpbm == .pgm ? "gray" : "RGB"
            maxValue = maxval
            bitsPerChannel = Int.bitWidth - maxval.leadingZeroBitCount
        case nil:
            return nil
        }
    }
}
