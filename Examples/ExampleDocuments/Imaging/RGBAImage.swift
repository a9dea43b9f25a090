/// One pixel of an ``RGBAImage``: 8-bit red, green, blue and (straight, not premultiplied) alpha.
public struct RGBAPixel: Sendable, Hashable {
    /// Red, 0…255.
    public var r: UInt8
    /// Green, 0…255.
    public var g: UInt8
    /// Blue, 0…255.
    public var b: UInt8
    /// Alpha, 0 (transparent) … 255 (opaque).
    public var a: UInt8

    /// Creates a pixel; alpha defaults to fully opaque. Never fails.
    public init(r: UInt8, g: UInt8, b: UInt8, a: UInt8 = 255) {
        self.r = r
        self.g = g
        self.b = b
        self.a = a
    }
}

/// An in-memory raster image: 8 bits per channel RGBA, rows top to bottom, pixels left to right.
///
/// `pixels.count` is always `width * height * 4` for images built by this module. `pixels` is
/// mutable so tools can edit it in place; an encoder handed a buffer of the wrong size throws
/// ``ImageCodecError/pixelCountMismatch(expected:actual:)`` instead of reading out of bounds.
public struct RGBAImage: Sendable, Equatable {
    /// Largest width or height accepted anywhere in this module.
    public static let maxDimension = 32_768
    /// Largest `width * height` the decoders accept by default (256 Mi pixels, 1 GiB of RGBA).
    /// Checked before any pixel memory is allocated, so a lying header cannot exhaust memory.
    public static let maxPixelCount = 1 << 28

    /// Number of columns, 1…``maxDimension``.
    public let width: Int
    /// Number of rows, 1…``maxDimension``.
    public let height: Int
    /// RGBA8, row-major, `count == width * height * 4`. Editing it to another size makes the
    /// encoders throw ``ImageCodecError/pixelCountMismatch(expected:actual:)``.
    public var pixels: [UInt8]

    /// Wraps an existing RGBA8 buffer.
    ///
    /// - Throws: ``ImageCodecError/invalidDimensions(width:height:)`` when a side is outside
    ///   `1...maxDimension`; ``ImageCodecError/pixelCountMismatch(expected:actual:)`` when
    ///   `pixels.count != width * height * 4`.
    public init(width: Int, height: Int, pixels: [UInt8]) throws {
        try Self.validate(width: width, height: height)
        guard pixels.count == width * height * 4 else {
            throw ImageCodecError.pixelCountMismatch(expected: width * height * 4, actual: pixels.count)
        }
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// Creates an image filled with one colour (transparent black by default).
    ///
    /// - Throws: ``ImageCodecError/invalidDimensions(width:height:)`` when a side is outside `1...maxDimension`.
    public init(width: Int, height: Int, fill: RGBAPixel = RGBAPixel(r: 0, g: 0, b: 0, a: 0)) throws {
        try Self.validate(width: width, height: height)
        self.width = width
        self.height = height
        var buffer = [UInt8](repeating: 0, count: width * height * 4)
        if fill != RGBAPixel(r: 0, g: 0, b: 0, a: 0) {
            buffer.withUnsafeMutableBufferPointer { out in
                var i = 0
                while i < out.count {
                    out[i] = fill.r; out[i + 1] = fill.g; out[i + 2] = fill.b; out[i + 3] = fill.a
                    i += 4
                }
            }
        }
        self.pixels = buffer
    }

    /// For codecs that have already validated the sizes; never traps, but callers must pass a
    /// buffer of exactly `width * height * 4` bytes.
    init(uncheckedWidth width: Int, height: Int, pixels: [UInt8]) {
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// Throws ``ImageCodecError/invalidDimensions(width:height:)`` unless both sides are in `1...maxDimension`.
    static func validate(width: Int, height: Int) throws {
        guard (1...maxDimension).contains(width), (1...maxDimension).contains(height) else {
            throw ImageCodecError.invalidDimensions(width: width, height: height)
        }
    }

    /// Number of pixels (`width * height`). Never fails.
    public var pixelCount: Int { width * height }

    /// True when every pixel has alpha 255. Never fails.
    public var isOpaque: Bool {
        pixels.withUnsafeBufferPointer { p in
            var i = 3
            while i < p.count {
                if p[i] != 255 { return false }
                i += 4
            }
            return true
        }
    }

    // MARK: Pixel access

    /// The pixel at column `x`, row `y` (origin top left).
    ///
    /// Never traps: a coordinate outside the image (or outside a `pixels` buffer edited to another
    /// size) reads as transparent black, and a write there is ignored, as when drawing past the
    /// edge of a canvas. Use ``pixel(x:y:)`` / ``setPixel(_:x:y:)`` to be told instead.
    public subscript(x: Int, y: Int) -> RGBAPixel {
        get { pixel(x: x, y: y) ?? RGBAPixel(r: 0, g: 0, b: 0, a: 0) }
        set { try? setPixel(newValue, x: x, y: y) }
    }

    /// The pixel at (`x`, `y`), or `nil` when the coordinate lies outside the image.
    public func pixel(x: Int, y: Int) -> RGBAPixel? {
        guard x >= 0, x < width, y >= 0, y < height else { return nil }
        let i = (y * width + x) * 4
        guard i + 3 < pixels.count else { return nil }
        return RGBAPixel(r: pixels[i], g: pixels[i + 1], b: pixels[i + 2], a: pixels[i + 3])
    }

    /// Replaces the pixel at (`x`, `y`).
    ///
    /// - Throws: ``ImageCodecError/outOfBounds(_:)`` when the coordinate lies outside the image.
    public mutating func setPixel(_ pixel: RGBAPixel, x: Int, y: Int) throws {
        guard x >= 0, x < width, y >= 0, y < height, (y * width + x) * 4 + 3 < pixels.count else {
            throw ImageCodecError.outOfBounds("pixel (\(x), \(y)) is outside the \(width)×\(height) image")
        }
        let i = (y * width + x) * 4
        pixels[i] = pixel.r; pixels[i + 1] = pixel.g; pixels[i + 2] = pixel.b; pixels[i + 3] = pixel.a
    }
}
