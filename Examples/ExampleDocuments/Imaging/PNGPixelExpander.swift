// Converts unfiltered PNG scanlines of any supported colour type and bit depth to RGBA8.

struct PNGPixelExpander {
    let header: PNGHeader
    /// 256 RGBA entries (1 KiB); entries past the palette are transparent black.
    private let paletteRGBA: [UInt8]
    private let paletteCount: Int
    /// tRNS colour key for grey (first value) or RGB images, compared against raw samples.
    private let key: (UInt16, UInt16, UInt16)?

    /// - Parameters:
    ///   - palette: the PLTE chunk's RGB triples (palette images only).
    ///   - transparency: the tRNS chunk's payload, if present and valid for the colour type.
    init(header: PNGHeader, palette: [UInt8], transparency: [UInt8]?) {
        self.header = header
        var table = [UInt8](repeating: 0, count: 1_024)
        let count = min(palette.count / 3, 256)
        for i in 0..<count {
            table[i * 4] = palette[i * 3]
            table[i * 4 + 1] = palette[i * 3 + 1]
            table[i * 4 + 2] = palette[i * 3 + 2]
            table[i * 4 + 3] = 255
        }
        var key: (UInt16, UInt16, UInt16)?
        if let transparency {
            func be16(_ i: Int) -> UInt16 { UInt16(transparency[i]) << 8 | UInt16(transparency[i + 1]) }
            switch header.colorType {
            case .palette:
                for i in 0..<min(transparency.count, count) { table[i * 4 + 3] = transparency[i] }
            case .gray where transparency.count >= 2:
                key = (be16(0), 0, 0)
            case .rgb where transparency.count >= 6:
                key = (be16(0), be16(2), be16(4))
            default:
                break
            }
        }
        self.paletteRGBA = table
        self.paletteCount = count
        self.key = key
    }

    @inline(__always)
    private static func scale16(_ hi: UInt8, _ lo: UInt8) -> UInt8 {
        // round(v * 255 / 65535), exact.
        UInt8(truncatingIfNeeded: ((UInt32(hi) << 8 | UInt32(lo)) &* 255 &+ 32_767) / 65_535)
    }

    /// Writes `count` pixels from the unfiltered scanline `src` to `dst`, advancing `dst` by
    /// `step` bytes per pixel (4 for a full row, more for an Adam7 pass).
    ///
    /// - Throws: ``ImageCodecError/corrupt(_:)`` when a palette index is outside the palette.
    func expand(_ src: UnsafePointer<UInt8>, count: Int, into dst: UnsafeMutablePointer<UInt8>, step: Int) throws {
        let depth = header.bitDepth
        switch (header.colorType, depth) {
        case (.rgba, 8):
            if step == 4 {
                dst.update(from: src, count: count * 4)
            } else {
                for i in 0..<count {
                    let s = src + i * 4, d = dst + i * step
                    d[0] = s[0]; d[1] = s[1]; d[2] = s[2]; d[3] = s[3]
                }
            }
        case (.rgba, _):
            for i in 0..<count {
                let s = src + i * 8, d = dst + i * step
                d[0] = Self.scale16(s[0], s[1]); d[1] = Self.scale16(s[2], s[3])
                d[2] = Self.scale16(s[4], s[5]); d[3] = Self.scale16(s[6], s[7])
            }
        case (.rgb, 8):
            let k = key.map { ($0.0, $0.1, $0.2) }
            for i in 0..<count {
                let s = src + i * 3, d = dst + i * step
                d[0] = s[0]; d[1] = s[1]; d[2] = s[2]
                if let k, UInt16(s[0]) == k.0, UInt16(s[1]) == k.1, UInt16(s[2]) == k.2 { d[3] = 0 } else { d[3] = 255 }
            }
        case (.rgb, _):
            for i in 0..<count {
                let s = src + i * 6, d = dst + i * step
                d[0] = Self.scale16(s[0], s[1]); d[1] = Self.scale16(s[2], s[3]); d[2] = Self.scale16(s[4], s[5])
                if let k = key,
                   UInt16(s[0]) << 8 | UInt16(s[1]) == k.0,
                   UInt16(s[2]) << 8 | UInt16(s[3]) == k.1,
                   UInt16(s[4]) << 8 | UInt16(s[5]) == k.2 { d[3] = 0 } else { d[3] = 255 }
            }
        case (.grayAlpha, 8):
            for i in 0..<count {
                let s = src + i * 2, d = dst + i * step
                d[0] = s[0]; d[1] = s[0]; d[2] = s[0]; d[3] = s[1]
            }
        case (.grayAlpha, _):
            for i in 0..<count {
                let s = src + i * 4, d = dst + i * step
                let v = Self.scale16(s[0], s[1])
                d[0] = v; d[1] = v; d[2] = v; d[3] = Self.scale16(s[2], s[3])
            }
        case (.gray, 16):
            for i in 0..<count {
                let s = src + i * 2, d = dst + i * step
                let v = Self.scale16(s[0], s[1])
                d[0] = v; d[1] = v; d[2] = v
                if let k = key, UInt16(s[0]) << 8 | UInt16(s[1]) == k.0 { d[3] = 0 } else { d[3] = 255 }
            }
        case (.gray, _):
            let maxValue = (1 << depth) - 1
            let factor = 255 / maxValue // 255, 85, 17 or 1
            let keyValue = key.map { Int($0.0) } ?? -1
            for i in 0..<count {
                let raw = Self.sample(src, index: i, depth: depth)
                let v = UInt8(truncatingIfNeeded: raw * factor)
                let d = dst + i * step
                d[0] = v; d[1] = v; d[2] = v; d[3] = raw == keyValue ? 0 : 255
            }
        case (.palette, _):
            var maxIndex = 0
            paletteRGBA.withUnsafeBufferPointer { table in
                for i in 0..<count {
                    let index = Self.sample(src, index: i, depth: depth)
                    maxIndex = max(maxIndex, index)
                    let t = index * 4, d = dst + i * step
                    d[0] = table[t]; d[1] = table[t + 1]; d[2] = table[t + 2]; d[3] = table[t + 3]
                }
            }
            if maxIndex >= paletteCount {
                throw ImageCodecError.corrupt("palette index \(maxIndex) is outside the \(paletteCount)-colour palette")
            }
        }
    }

    /// The `index`-th sample of a packed scanline with 1, 2, 4 or 8 bits per sample (MSB first).
    @inline(__always)
    private static func sample(_ src: UnsafePointer<UInt8>, index: Int, depth: Int) -> Int {
        if depth == 8 { return Int(src[index]) }
        let bit = index * depth
        let shift = 8 - depth - (bit & 7)
        return Int(src[bit >> 3] >> UInt8(shift)) & ((1 << depth) - 1)
    }
}
