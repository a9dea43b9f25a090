// Simple whole-image operations used by the image tool. None of them can fail on a valid image;
// on an image whose `pixels` buffer was resized by hand they work on the part that exists.

extension RGBAImage {
    /// A copy converted to grey (ITU-R BT.601 luma: 0.299 R + 0.587 G + 0.114 B); alpha is kept.
    /// Never fails.
    public func grayscaled() -> RGBAImage {
        var copy = self
        copy.pixels.withUnsafeMutableBufferPointer { p in
            var i = 0
            while i + 3 < p.count {
                let luma = (UInt32(p[i]) * 19_595 + UInt32(p[i + 1]) * 38_470 + UInt32(p[i + 2]) * 7_471 + 32_768) >> 16
                let v = UInt8(truncatingIfNeeded: luma)
                p[i] = v; p[i + 1] = v; p[i + 2] = v
                i += 4
            }
        }
        return copy
    }

    /// A copy with red, green and blue inverted (`255 - v`); alpha is kept. Never fails.
    public func inverted() -> RGBAImage {
        var copy = self
        copy.pixels.withUnsafeMutableBufferPointer { p in
            var i = 0
            while i + 3 < p.count {
                p[i] = ~p[i]; p[i + 1] = ~p[i + 1]; p[i + 2] = ~p[i + 2]
                i += 4
            }
        }
        return copy
    }

    /// A copy rotated clockwise by `quarterTurns` × 90° (negative turns rotate counter-clockwise;
    /// any integer is accepted and reduced modulo 4). Never fails.
    public func rotated(quarterTurns: Int) -> RGBAImage {
        let turns = ((quarterTurns % 4) + 4) % 4
        guard turns != 0, pixels.count == width * height * 4 else { return self }
        let w = width, h = height
        let newWidth = turns == 2 ? w : h
        let newHeight = turns == 2 ? h : w
        var out = [UInt8](repeating: 0, count: w * h * 4)
        pixels.withUnsafeBytes { src in
            out.withUnsafeMutableBytes { dst in
                for y in 0..<h {
                    let row = y * w
                    for x in 0..<w {
                        let target: Int
                        switch turns {
                        case 1: target = x * h + (h - 1 - y)          // (x, y) -> (h-1-y, x)
                        case 2: target = (h - 1 - y) * w + (w - 1 - x)  // (x, y) -> (w-1-x, h-1-y)
                        default: target = (w - 1 - x) * h + y          // (x, y) -> (y, w-1-x)
                        }
                        let value = src.loadUnaligned(fromByteOffset: (row + x) * 4, as: UInt32.self)
                        dst.storeBytes(of: value, toByteOffset: target * 4, as: UInt32.self)
                    }
                }
            }
        }
        return RGBAImage(uncheckedWidth: newWidth, height: newHeight, pixels: out)
    }

    /// The sub-image whose top-left corner is (`x`, `y`).
    ///
    /// - Throws: ``ImageCodecError/invalidDimensions(width:height:)`` when the rectangle is empty
    ///   (a side below 1: no image has that size); ``ImageCodecError/outOfBounds(_:)`` when it
    ///   does not lie completely inside the image (the message names the rectangle and the image size).
    public func cropped(x: Int, y: Int, width cropWidth: Int, height cropHeight: Int) throws -> RGBAImage {
        guard cropWidth >= 1, cropHeight >= 1 else {
            throw ImageCodecError.invalidDimensions(width: cropWidth, height: cropHeight)
        }
        guard x >= 0, y >= 0,
              x < width, y < height,
              cropWidth <= width - x, cropHeight <= height - y,
              pixels.count == width * height * 4 else {
            throw ImageCodecError.outOfBounds(
                "crop rectangle x=\(x) y=\(y) width=\(cropWidth) height=\(cropHeight) does not fit inside the \(width)×\(height) image")
        }
        var out = [UInt8](repeating: 0, count: cropWidth * cropHeight * 4)
        let rowBytes = cropWidth * 4
        pixels.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                guard let s = src.baseAddress, let d = dst.baseAddress else { return }
                for row in 0..<cropHeight {
                    (d + row * rowBytes).update(from: s + ((y + row) * width + x) * 4, count: rowBytes)
                }
            }
        }
        return RGBAImage(uncheckedWidth: cropWidth, height: cropHeight, pixels: out)
    }

    // MARK: Generators

    /// An opaque test image: red grows left to right, green top to bottom, blue along the
    /// diagonal. Sides are clamped to `1...maxDimension`, so this never fails.
    public static func gradient(width: Int, height: Int) -> RGBAImage {
        let w = min(max(width, 1), maxDimension), h = min(max(height, 1), maxDimension)
        var out = [UInt8](repeating: 255, count: w * h * 4)
        out.withUnsafeMutableBufferPointer { p in
            let dx = max(w - 1, 1), dy = max(h - 1, 1), dd = max(w + h - 2, 1)
            for y in 0..<h {
                let g = UInt8(truncatingIfNeeded: y * 255 / dy)
                var i = y * w * 4
                for x in 0..<w {
                    p[i] = UInt8(truncatingIfNeeded: x * 255 / dx)
                    p[i + 1] = g
                    p[i + 2] = UInt8(truncatingIfNeeded: (x + y) * 255 / dd)
                    i += 4
                }
            }
        }
        return RGBAImage(uncheckedWidth: w, height: h, pixels: out)
    }

    /// An opaque black-and-white checkerboard whose squares are `cell` pixels wide, starting with
    /// white at the top left. Sides are clamped to `1...maxDimension` and `cell` to at least 1,
    /// so this never fails.
    public static func checkerboard(width: Int, height: Int, cell: Int = 8) -> RGBAImage {
        let w = min(max(width, 1), maxDimension), h = min(max(height, 1), maxDimension)
        let c = max(cell, 1)
        var out = [UInt8](repeating: 255, count: w * h * 4)
        out.withUnsafeMutableBufferPointer { p in
            for y in 0..<h {
                var i = y * w * 4
                for x in 0..<w {
                    let v: UInt8 = ((x / c) + (y / c)) % 2 == 0 ? 255 : 0
                    p[i] = v; p[i + 1] = v; p[i + 2] = v
                    i += 4
                }
            }
        }
        return RGBAImage(uncheckedWidth: w, height: h, pixels: out)
    }
}
