import Foundation

/// Draws an ``RGBAImage`` in a terminal with 24-bit colour "upper half block" characters: each
/// character cell shows two pixels, the upper one as the foreground colour of `▀` and the lower
/// one as the background colour. Terminal cells are about twice as tall as wide, so the pixels
/// come out roughly square.
public struct TerminalRenderer: Sendable {
    /// What shows through transparent pixels.
    public enum Background: String, CaseIterable, Sendable {
        /// Neutral grey squares (4 × 4 output pixels each), like image editors.
        case checkerboard
        /// Plain black.
        case black
    }

    /// The most character columns a line may use (at least 1).
    public var maxColumns: Int
    /// What transparent pixels are drawn over.
    public var background: Background = .checkerboard

    /// A renderer that draws at most `maxColumns` characters wide.
    public init(maxColumns: Int, background: Background = .checkerboard) {
        self.maxColumns = max(1, maxColumns)
        self.background = background
    }

    /// Selects and resets colours (ECMA-48 SGR).
    private static let escape = "\u{1B}["
    private static let reset = "\u{1B}[0m"

    /// The size in pixels the image is drawn at: as wide as the image but at most `maxColumns`,
    /// the height scaled by the same factor (rounded, at least 1). Images are never enlarged.
    public static func outputSize(width: Int, height: Int, maxColumns: Int) -> (width: Int, height: Int) {
        let outWidth = max(1, min(width, maxColumns))
        guard outWidth < width else { return (width, height) }
        let scaled = (Double(height) * Double(outWidth) / Double(width)).rounded()
        return (outWidth, max(1, min(height, Int(scaled))))
    }

    /// The terminal lines that draw `image`, each ending with a colour reset (no newline).
    ///
    /// The image is first scaled down with ``downsample(_:width:height:)``; when the scaled
    /// height is odd the last line has only upper halves (on the terminal's own background).
    public func lines(for image: RGBAImage) -> [String] {
        let size = Self.outputSize(width: image.width, height: image.height, maxColumns: maxColumns)
        let rgb = downsample(image, width: size.width, height: size.height)
        var lines: [String] = []
        lines.reserveCapacity((size.height + 1) / 2)
        for top in stride(from: 0, to: size.height, by: 2) {
            var line = ""
            line.reserveCapacity(size.width * 40)
            for x in 0..<size.width {
                let upper = (top * size.width + x) * 3
                line += Self.colour(foreground: true, rgb[upper], rgb[upper + 1], rgb[upper + 2])
                if top + 1 < size.height {
                    let lower = ((top + 1) * size.width + x) * 3
                    line += Self.colour(foreground: false, rgb[lower], rgb[lower + 1], rgb[lower + 2])
                } else {
                    line += Self.escape + "49m" // default background: half a line of pixels
                }
                line += "▀"
            }
            line += Self.reset
            lines.append(line)
        }
        return lines
    }

    private static func colour(foreground: Bool, _ r: UInt8, _ g: UInt8, _ b: UInt8) -> String {
        "\(escape)\(foreground ? 38 : 48);2;\(r);\(g);\(b)m"
    }

    /// Scales `image` down to `width` × `height` (each at most the image's) by averaging the box
    /// of source pixels behind every output pixel, then composites the result over
    /// ``background``. Returns opaque RGB, 3 bytes per pixel, row-major.
    ///
    /// Colours are averaged premultiplied by alpha, so a transparent pixel's (invisible) colour
    /// does not bleed into its neighbours. Integer arithmetic throughout; sums fit easily in
    /// `Int` (a box holds at most 2³⁰ pixels of at most 255 × 255).
    public func downsample(_ image: RGBAImage, width: Int, height: Int) -> [UInt8] {
        let sourceWidth = image.width, sourceHeight = image.height
        let width = max(1, min(width, sourceWidth)), height = max(1, min(height, sourceHeight))
        var output = [UInt8](repeating: 0, count: width * height * 3)
        // Source column range of each output column, computed once.
        let columns: [Range<Int>] = (0..<width).map { x in
            let start = x * sourceWidth / width
            return start..<max(start + 1, (x + 1) * sourceWidth / width)
        }
        image.pixels.withUnsafeBufferPointer { pixels in
            guard pixels.count >= sourceWidth * sourceHeight * 4 else { return } // inconsistent image: draw black
            for y in 0..<height {
                let rowStart = y * sourceHeight / height
                let rows = rowStart..<max(rowStart + 1, (y + 1) * sourceHeight / height)
                for x in 0..<width {
                    var red = 0, green = 0, blue = 0, alpha = 0
                    for sy in rows {
                        var index = (sy * sourceWidth + columns[x].lowerBound) * 4
                        for _ in columns[x] {
                            let a = Int(pixels[index + 3])
                            red += Int(pixels[index]) * a
                            green += Int(pixels[index + 1]) * a
                            blue += Int(pixels[index + 2]) * a
                            alpha += a
                            index += 4
                        }
                    }
                    // out = premultiplied average + background × (1 − average alpha), rounded.
                    let count = rows.count * columns[x].count
                    let full = 255 * count
                    let back = backgroundLevel(x: x, y: y)
                    let uncovered = back * (full - alpha)
                    let out = (y * width + x) * 3
                    output[out] = UInt8(clamping: (red + uncovered + full / 2) / full)
                    output[out + 1] = UInt8(clamping: (green + uncovered + full / 2) / full)
                    output[out + 2] = UInt8(clamping: (blue + uncovered + full / 2) / full)
                }
            }
        }
        return output
    }

    /// The grey level of the background behind output pixel (`x`, `y`).
    private func backgroundLevel(x: Int, y: Int) -> Int {
        switch background {
        case .black: return 0
        case .checkerboard: return (x / 4 + y / 4) % 2 == 0 ? 153 : 102
        }
    }

    /// The default number of columns: `$COLUMNS` when it is a positive number, else the width
    /// of the terminal on standard output, else 80.
    public static func defaultColumns(environment: [String: String] = ProcessInfo.processInfo.environment) -> Int {
        if let text = environment["COLUMNS"], let columns = Int(text.trimmingCharacters(in: .whitespaces)), columns > 0 {
            return columns
        }
        var size = winsize()
        if isatty(STDOUT_FILENO) == 1, ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 {
            return Int(size.ws_col)
        }
        return 80
    }
}
