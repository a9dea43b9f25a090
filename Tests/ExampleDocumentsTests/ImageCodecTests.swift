import Foundation
import Testing
@testable import ExampleDocuments

// Tests for the pure-Swift image codec in Examples/ExampleDocuments/Imaging.
// Fixtures were made by libpng-based tools (see Fixtures/README.md); the tests only read them.

// MARK: - Helpers

private enum CodecFixtures {
    /// Every PNG fixture; each has a `.rgba` (or `.rgba16`) twin with ImageMagick's decoding.
    static let pngNames = [
        "gray1", "gray2", "gray4", "gray8", "gray8-trns", "gray16", "gray-alpha8",
        "rgb8", "rgb8-trns", "rgb16", "rgba8", "rgba16",
        "palette2", "palette4", "palette8", "palette8-trns",
        "filter-nofilter", "filter-sub", "filter-up", "filter-avg", "filter-paeth",
        "interlaced-rgba8", "interlaced-palette4", "interlaced-gray1", "interlaced-tiny",
    ]

    static func data(_ name: String, _ ext: String) throws -> Data {
        let url = try #require(Bundle.module.url(forResource: name, withExtension: ext, subdirectory: "Fixtures"),
                               "missing fixture \(name).\(ext)")
        return try Data(contentsOf: url)
    }

    static func bytes(_ name: String, _ ext: String = "png") throws -> [UInt8] {
        [UInt8](try data(name, ext))
    }

    /// The reference pixels as RGBA8: the tool's `.rgba` file, or for 16-bit fixtures its exact
    /// 16-bit `.rgba16` output reduced with the PNG spec's rounding, round(v × 255 / 65535).
    static func expectedPixels(_ name: String) throws -> [UInt8] {
        if name.hasSuffix("16") {
            let wide = try bytes(name, "rgba16")
            return stride(from: 0, to: wide.count - 1, by: 2).map { i in
                let v = UInt32(wide[i]) << 8 | UInt32(wide[i + 1])
                return UInt8((v * 255 + 32_767) / 65_535)
            }
        }
        return try bytes(name, "rgba")
    }
}

/// Deterministic xorshift generator so failures are reproducible.
private struct TestRandom {
    var state: UInt64
    mutating func next() -> UInt64 {
        state ^= state << 13; state ^= state >> 7; state ^= state << 17
        return state
    }
    mutating func byte() -> UInt8 { UInt8(truncatingIfNeeded: next() >> 24) }
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}

/// Builds PNG files chunk by chunk (with correct CRCs) for malformed-input tests.
private enum PNGBuilder {
    static func be32(_ v: UInt32) -> [UInt8] {
        [UInt8(truncatingIfNeeded: v >> 24), UInt8(truncatingIfNeeded: v >> 16), UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v)]
    }

    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typeAndData = Array(type.utf8) + data
        return be32(UInt32(data.count)) + typeAndData + be32(Zlib.crc32(typeAndData))
    }

    static func ihdr(width: UInt32, height: UInt32, depth: UInt8 = 8, color: UInt8 = 0, interlace: UInt8 = 0) -> [UInt8] {
        chunk("IHDR", be32(width) + be32(height) + [depth, color, 0, 0, interlace])
    }

    static func png(_ chunks: [UInt8]...) -> [UInt8] {
        PNGFormat.signature + chunks.joined()
    }

    /// A valid grey 8-bit PNG whose raw (filtered) scanlines are `raw`.
    static func gray(width: UInt32, height: UInt32, raw: [UInt8], extra: [UInt8] = []) throws -> [UInt8] {
        png(ihdr(width: width, height: height), extra, chunk("IDAT", try Zlib.compress(raw)), chunk("IEND", []))
    }
}

private func randomImage(width: Int, height: Int, seed: UInt64, kind: PNGHeader.ColorType) throws -> RGBAImage {
    var random = TestRandom(state: seed)
    var pixels = [UInt8](repeating: 0, count: width * height * 4)
    for i in stride(from: 0, to: pixels.count, by: 4) {
        // Mix smooth areas and noise so every filter type wins somewhere.
        let smooth = (i / 4) % width < width / 2
        let r = smooth ? UInt8(truncatingIfNeeded: (i / 4) % width * 3) : random.byte()
        let g = smooth ? UInt8(truncatingIfNeeded: (i / 4) / width * 5) : random.byte()
        let b = random.byte()
        switch kind {
        case .gray: pixels[i] = r; pixels[i + 1] = r; pixels[i + 2] = r; pixels[i + 3] = 255
        case .grayAlpha: pixels[i] = r; pixels[i + 1] = r; pixels[i + 2] = r; pixels[i + 3] = b
        case .rgb, .palette: pixels[i] = r; pixels[i + 1] = g; pixels[i + 2] = b; pixels[i + 3] = 255
        case .rgba: pixels[i] = r; pixels[i + 1] = g; pixels[i + 2] = b; pixels[i + 3] = random.byte()
        }
    }
    return try RGBAImage(width: width, height: height, pixels: pixels)
}

/// The colour type byte of an encoded PNG (IHDR is always the first chunk).
private func colorTypeByte(_ png: [UInt8]) -> UInt8 { png[25] }

// MARK: - PNG decoding against a reference decoder

@Suite("ImageCodec: PNG decoding of libpng-made fixtures")
struct ImageCodecFixtureTests {
    @Test("decodes each fixture to exactly the pixels ImageMagick/libpng produce", arguments: CodecFixtures.pngNames)
    func decodesFixture(name: String) throws {
        let png = try CodecFixtures.bytes(name)
        let expected = try CodecFixtures.expectedPixels(name)
        let image = try PNGDecoder.decode(png)
        #expect(image.pixels.count == expected.count)
        #expect(image.width * image.height * 4 == expected.count)
        if image.pixels != expected {
            let firstDifference = zip(image.pixels, expected).enumerated().first { $0.element.0 != $0.element.1 }
            Issue.record("\(name): first difference at byte \(firstDifference?.offset ?? -1): \(String(describing: firstDifference?.element))")
        }
    }

    @Test("fixtures have the advertised sizes and go through ImageCodec.decode(Data)")
    func sizesAndFacade() throws {
        let rgb = try ImageCodec.decode(CodecFixtures.data("rgb8", "png"))
        #expect(rgb.width == 37 && rgb.height == 29)
        let tiny = try ImageCodec.decode(CodecFixtures.data("interlaced-tiny", "png"))
        #expect(tiny.width == 3 && tiny.height == 2)
    }

    @Test("the filter fixtures all decode to the same picture")
    func filterFixturesAgree() throws {
        let reference = try PNGDecoder.decode(CodecFixtures.bytes("filter-nofilter"))
        for name in ["filter-sub", "filter-up", "filter-avg", "filter-paeth", "rgb8"] {
            #expect(try PNGDecoder.decode(CodecFixtures.bytes(name)) == reference, "\(name)")
        }
    }

    @Test("interlaced and progressive encodings of the same picture agree")
    func interlacedMatchesProgressive() throws {
        let interlaced = try PNGDecoder.decode(CodecFixtures.bytes("interlaced-palette4"))
        let plain = try PNGDecoder.decode(CodecFixtures.bytes("palette4"))
        #expect(interlaced == plain)
        #expect(try PNGDecoder.decode(CodecFixtures.bytes("interlaced-rgba8")) == PNGDecoder.decode(CodecFixtures.bytes("rgba8")))
    }

    @Test("colour-key transparency marks exactly the key pixels transparent")
    func colorKey() throws {
        let gray = try PNGDecoder.decode(CodecFixtures.bytes("gray8-trns"))
        var transparent = 0
        for i in stride(from: 0, to: gray.pixels.count, by: 4) where gray.pixels[i + 3] == 0 {
            #expect(gray.pixels[i] == 101)
            transparent += 1
        }
        #expect(transparent == 41)
    }
}

// MARK: - PNG encoding

@Suite("ImageCodec: PNG encoding")
struct ImageCodecEncoderTests {
    static let sizes: [(Int, Int)] = [(1, 1), (1, 17), (17, 1), (3, 5), (31, 7), (64, 33), (127, 3), (9, 130)]

    @Test("encode → decode round-trips random images of odd sizes", arguments: [PNGHeader.ColorType.gray, .grayAlpha, .rgb, .rgba])
    func roundTrip(kind: PNGHeader.ColorType) throws {
        for (index, (width, height)) in Self.sizes.enumerated() {
            let image = try randomImage(width: width, height: height, seed: UInt64(index + 1) * 7_919, kind: kind)
            let png = try PNGEncoder.encode(image)
            #expect(try PNGDecoder.decode(png) == image, "\(width)×\(height) \(kind)")
            #expect(colorTypeByte(png) == kind.rawValue, "smallest colour type chosen for \(width)×\(height) \(kind)")
        }
    }

    @Test("every compression level produces a decodable file", arguments: [0, 1, 6, 9])
    func levels(level: Int) throws {
        let image = try randomImage(width: 45, height: 23, seed: 99, kind: .rgba)
        #expect(try PNGDecoder.decode(PNGEncoder.encode(image, compressionLevel: level)) == image)
    }

    @Test("invalid compression levels and inconsistent pixel buffers are refused")
    func invalidInput() throws {
        let image = RGBAImage.gradient(width: 4, height: 4)
        #expect(throws: ImageCodecError.self) { try PNGEncoder.encode(image, compressionLevel: 10) }
        var broken = image
        broken.pixels.removeLast()
        #expect(throws: ImageCodecError.pixelCountMismatch(expected: 64, actual: 63)) { try PNGEncoder.encode(broken) }
    }

    @Test("adaptive filtering uses several filter types and compresses synthetic images well")
    func filtersAndCompression() throws {
        let image = RGBAImage.gradient(width: 256, height: 256)
        let header = PNGHeader(width: 256, height: 256, bitDepth: 8, colorType: .rgb, interlaced: false)
        let filtered = PNGEncoder.filteredScanlines(image, header: header)
        let used = Set(stride(from: 0, to: filtered.count, by: 256 * 3 + 1).map { filtered[$0] })
        #expect(used.count >= 2, "filters used: \(used.sorted())")
        let png = try PNGEncoder.encode(image)
        #expect(png.count < 256 * 256 * 3 / 20, "\(png.count) bytes")
        let checker = try PNGEncoder.encode(.checkerboard(width: 200, height: 100, cell: 10))
        #expect(checker.count < 400, "\(checker.count) bytes")
        #expect(colorTypeByte(checker) == 0)
    }

    @Test("the vectorised filter chooser matches a straightforward scalar reference")
    func filterMatchesReference() {
        func reference(_ cur: [UInt8], _ prev: [UInt8], _ bpp: Int) -> [UInt8] {
            func paeth(_ a: Int, _ b: Int, _ c: Int) -> Int {
                let p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c)
                return pa <= pb && pa <= pc ? a : (pb <= pc ? b : c)
            }
            var best: [UInt8] = []
            var bestCost = Int.max
            for filter in 0...4 {
                let row: [UInt8] = cur.indices.map { i in
                    let a = i >= bpp ? Int(cur[i - bpp]) : 0, b = Int(prev[i]), c = i >= bpp ? Int(prev[i - bpp]) : 0
                    let prediction = [0, a, b, (a + b) / 2, paeth(a, b, c)][filter]
                    return UInt8(truncatingIfNeeded: Int(cur[i]) - prediction)
                }
                let cost = row.reduce(0) { $0 + Int(Int8(bitPattern: $1).magnitude) }
                if cost < bestCost { bestCost = cost; best = [UInt8(filter)] + row }
            }
            return best
        }
        var random = TestRandom(state: 77)
        for trial in 0..<400 {
            let bpp = [1, 2, 3, 4, 6, 8][trial % 6]
            let length = bpp * (1 + random.below(40))
            let smooth = trial % 3 == 0
            let prev = (0..<length).map { i in smooth ? UInt8(truncatingIfNeeded: i * 3) : random.byte() }
            let cur = (0..<length).map { i in smooth ? UInt8(truncatingIfNeeded: i * 3 + 1 + random.below(3)) : random.byte() }
            var out = [UInt8](repeating: 0, count: length + 1)
            cur.withUnsafeBufferPointer { c in
                prev.withUnsafeBufferPointer { p in
                    out.withUnsafeMutableBufferPointer { o in
                        PNGFilters.filterRow(c.baseAddress!, prev: p.baseAddress!, rowBytes: length, bpp: bpp, into: o.baseAddress!)
                    }
                }
            }
            #expect(out == reference(cur, prev, bpp), "trial \(trial): bpp \(bpp), \(length) bytes")
        }
    }

    @Test("large images are split into several IDAT chunks and still decode")
    func multipleIDAT() throws {
        let image = try randomImage(width: 700, height: 600, seed: 5, kind: .rgba)
        let png = try PNGEncoder.encode(image, compressionLevel: 1)
        #expect(png.count > PNGEncoder.idatChunkSize)
        #expect(try PNGDecoder.decode(png) == image)
    }

    @Test("the benchmark image round-trips and CodecBenchmark reports positive speeds")
    func benchmark() throws {
        let result = CodecBenchmark.measure(width: 64, height: 48)
        #expect(result.encodeMBps > 0 && result.decodeMBps > 0 && result.compressedBytes > 0)
    }
}

// MARK: - Malformed PNG input

@Suite("ImageCodec: malformed PNG input")
struct ImageCodecMalformedPNGTests {
    @Test("every proper prefix of a PNG throws", arguments: ["gray1", "interlaced-tiny", "palette8-trns", "rgb16"])
    func truncatedPrefixes(name: String) throws {
        let png = try CodecFixtures.bytes(name)
        for length in 0..<png.count {
            #expect(throws: ImageCodecError.self, "prefix of \(length) bytes") { try PNGDecoder.decode(Array(png[..<length])) }
        }
        #expect(throws: Never.self) { try PNGDecoder.decode(png) }
    }

    @Test("every single-bit flip in a PNG is detected", arguments: ["gray8-trns", "interlaced-tiny", "gray16"])
    func bitFlips(name: String) throws {
        let png = try CodecFixtures.bytes(name)
        var undetected: [Int] = []
        for index in 0..<png.count {
            for bit in 0..<8 {
                var damaged = png
                damaged[index] ^= 1 << bit
                do {
                    _ = try PNGDecoder.decode(damaged)
                    undetected.append(index * 8 + bit)
                } catch is ImageCodecError {
                    // expected
                }
            }
        }
        #expect(undetected.isEmpty, "undetected flips at bits \(undetected.prefix(20))")
    }

    @Test("damaged compressed data with a recomputed CRC fails cleanly or decodes, never crashes")
    func fuzzCompressedData() throws {
        let image = try randomImage(width: 23, height: 19, seed: 3, kind: .rgba)
        let raw = PNGEncoder.filteredScanlines(image, header: PNGHeader(width: 23, height: 19, bitDepth: 8, colorType: .rgba, interlaced: false))
        let compressed = try Zlib.compress(raw)
        var random = TestRandom(state: 42)
        var failures = 0
        for _ in 0..<2_000 {
            var damaged = compressed
            for _ in 0..<(1 + random.below(4)) {
                damaged[random.below(damaged.count)] = random.byte()
            }
            if random.below(4) == 0 { damaged.removeLast(random.below(damaged.count)) }
            let png = PNGBuilder.png(PNGBuilder.ihdr(width: 23, height: 19, color: 6), PNGBuilder.chunk("IDAT", damaged), PNGBuilder.chunk("IEND", []))
            do { _ = try PNGDecoder.decode(png) } catch is ImageCodecError { failures += 1 }
        }
        #expect(failures > 1_500)
    }

    @Test("damaged filtered scanlines (recompressed) fail cleanly or decode, never crash")
    func fuzzScanlines() throws {
        var random = TestRandom(state: 7)
        for trial in 0..<300 {
            let color: UInt8 = [0, 2, 3, 4, 6][trial % 5]
            let depth: UInt8 = color == 3 ? [1, 2, 4, 8][trial % 4] : (color == 0 ? [1, 2, 4, 8, 16][trial % 5] : [8, 16][trial % 2])
            let interlace = UInt8(trial % 2)
            let header = PNGHeader(width: 1 + random.below(20), height: 1 + random.below(20), bitDepth: Int(depth),
                                   colorType: try #require(PNGHeader.ColorType(rawValue: color)), interlaced: interlace == 1)
            var raw = (0..<header.decompressedSize).map { _ in random.byte() }
            if trial % 3 != 0 { // mostly valid filter bytes so the expanders run
                var offset = 0
                for pass in header.passes() {
                    for _ in 0..<pass.height {
                        raw[offset] = UInt8(random.below(5))
                        offset += 1 + header.rowBytes(pixels: pass.width)
                    }
                }
            }
            let palette = PNGBuilder.chunk("PLTE", (0..<(3 * (1 + random.below(256)))).map { _ in random.byte() })
            let png = PNGBuilder.png(
                PNGBuilder.ihdr(width: UInt32(header.width), height: UInt32(header.height), depth: depth, color: color, interlace: interlace),
                color == 3 ? palette : [],
                PNGBuilder.chunk("IDAT", try Zlib.compress(raw)), PNGBuilder.chunk("IEND", []))
            do {
                let image = try PNGDecoder.decode(png)
                #expect(image.width == header.width && image.height == header.height)
            } catch is ImageCodecError {}
        }
    }

    @Test("a lying 65535×65535 header fails at once without allocating")
    func lyingHeader() throws {
        let huge = try PNGBuilder.gray(width: 65_535, height: 65_535, raw: [0, 0, 0])
        #expect(throws: ImageCodecError.tooLarge(width: 65_535, height: 65_535)) { try PNGDecoder.decode(huge) }
        // Within the limits (16384² = 256 Mi pixels) but with almost no data: must fail on the
        // missing data, not allocate 1 GiB of pixels first.
        let big = try PNGBuilder.gray(width: 16_384, height: 16_384, raw: [UInt8](repeating: 0, count: 1_000))
        #expect(throws: ImageCodecError.self) { try PNGDecoder.decode(big) }
        #expect(throws: ImageCodecError.tooLarge(width: 100, height: 100)) {
            try PNGDecoder.decode(PNGBuilder.gray(width: 100, height: 100, raw: []), maxPixelCount: 9_999)
        }
    }

    @Test("a decompression bomb is stopped at the size the header implies")
    func zlibBomb() throws {
        // 1×1 grey needs 2 bytes; the IDAT inflates to 64 MiB of zeros (about 64 KiB compressed).
        let bomb = try Zlib.compress([UInt8](repeating: 0, count: 64 << 20), level: 9)
        #expect(bomb.count < 100_000)
        let png = PNGBuilder.png(PNGBuilder.ihdr(width: 1, height: 1), PNGBuilder.chunk("IDAT", bomb), PNGBuilder.chunk("IEND", []))
        #expect(throws: ImageCodecError.decompressedDataTooLarge(limit: 2)) { try PNGDecoder.decode(png) }
        #expect(throws: ImageCodecError.decompressedDataTooLarge(limit: 1_000)) { try Zlib.decompress(bomb, expectedSize: 1_000) }
        #expect(throws: ImageCodecError.decompressedDataTooLarge(limit: 4_096)) { try Zlib.decompress(bomb, expectedSize: nil, limit: 4_096) }
    }

    @Test("structural errors are reported with the right case")
    func structuralErrors() throws {
        let idat = PNGBuilder.chunk("IDAT", try Zlib.compress([0, 7]))
        let iend = PNGBuilder.chunk("IEND", [])
        let ihdr = PNGBuilder.ihdr(width: 1, height: 1)
        #expect(try PNGDecoder.decode(PNGBuilder.png(ihdr, idat, iend)).pixels == [7, 7, 7, 255])

        #expect(throws: ImageCodecError.notPNG) { try PNGDecoder.decode(Array("GIF89a-not-a-png".utf8)) }
        #expect(throws: ImageCodecError.truncated("the file ends before the IEND chunk")) { try PNGDecoder.decode(PNGBuilder.png(ihdr, idat)) }
        #expect(throws: ImageCodecError.unsupported("the critical PNG chunk ABCD")) {
            try PNGDecoder.decode(PNGBuilder.png(ihdr, PNGBuilder.chunk("ABCD", [1]), idat, iend))
        }
        #expect(throws: Never.self) { // unknown ancillary chunks are skipped
            try PNGDecoder.decode(PNGBuilder.png(ihdr, PNGBuilder.chunk("abCD", [1]), idat, iend))
        }
        #expect(throws: ImageCodecError.corrupt("the IDAT chunks are not consecutive")) {
            try PNGDecoder.decode(PNGBuilder.png(ihdr, PNGBuilder.chunk("IDAT", []), PNGBuilder.chunk("teXt", []), idat, iend))
        }
        #expect(throws: ImageCodecError.corrupt("the first chunk is IDAT, but a PNG must start with IHDR")) {
            try PNGDecoder.decode(PNGBuilder.png(idat, ihdr, iend))
        }
        #expect(throws: ImageCodecError.corrupt("the file has no IDAT (image data) chunk")) { try PNGDecoder.decode(PNGBuilder.png(ihdr, iend)) }
        #expect(throws: ImageCodecError.corrupt("bit depth 16 is not allowed for colour type 3")) {
            try PNGDecoder.decode(PNGBuilder.png(PNGBuilder.ihdr(width: 1, height: 1, depth: 16, color: 3), idat, iend))
        }
        #expect(throws: ImageCodecError.corrupt("colour type 5 is not defined by PNG")) {
            try PNGDecoder.decode(PNGBuilder.png(PNGBuilder.ihdr(width: 1, height: 1, color: 5), idat, iend))
        }
        #expect(throws: ImageCodecError.corrupt("the image size 0 × 1 is invalid")) {
            try PNGDecoder.decode(PNGBuilder.png(PNGBuilder.ihdr(width: 0, height: 1), idat, iend))
        }
        #expect(throws: ImageCodecError.corrupt("the palette image has no PLTE chunk")) {
            try PNGDecoder.decode(PNGBuilder.png(PNGBuilder.ihdr(width: 1, height: 1, color: 3), idat, iend))
        }
        #expect(throws: ImageCodecError.corrupt("palette index 7 is outside the 2-colour palette")) {
            try PNGDecoder.decode(PNGBuilder.png(PNGBuilder.ihdr(width: 1, height: 1, color: 3),
                                                 PNGBuilder.chunk("PLTE", [1, 2, 3, 4, 5, 6]), idat, iend))
        }
        #expect(throws: ImageCodecError.corrupt("scanline 1 uses filter type 9, which PNG does not define")) {
            try PNGDecoder.decode(PNGBuilder.gray(width: 1, height: 2, raw: [0, 1, 9, 1]))
        }
        #expect(throws: ImageCodecError.truncated("the image data holds 3 of the 4 bytes the header describes")) {
            try PNGDecoder.decode(PNGBuilder.gray(width: 1, height: 2, raw: [0, 1, 0]))
        }
        var badCRC = PNGBuilder.png(ihdr, idat, iend)
        badCRC[badCRC.count - 13] ^= 0xFF // inside IDAT's CRC
        #expect(throws: ImageCodecError.checksumMismatch(chunk: "IDAT")) { try PNGDecoder.decode(badCRC) }
    }

    @Test("palette tRNS and a short palette decode as the spec says")
    func paletteTransparency() throws {
        let png = PNGBuilder.png(PNGBuilder.ihdr(width: 3, height: 1, depth: 2, color: 3),
                                 PNGBuilder.chunk("PLTE", [10, 20, 30, 40, 50, 60, 70, 80, 90]),
                                 PNGBuilder.chunk("tRNS", [0, 128]),
                                 PNGBuilder.chunk("IDAT", try Zlib.compress([0, 0b00_01_10_00])),
                                 PNGBuilder.chunk("IEND", []))
        #expect(try PNGDecoder.decode(png).pixels == [10, 20, 30, 0, 40, 50, 60, 128, 70, 80, 90, 255])
    }
}

// MARK: - zlib wrapper

@Suite("ImageCodec: zlib wrapper")
struct ImageCodecZlibTests {
    @Test("CRC-32 matches the standard check value")
    func crc() {
        #expect(Zlib.crc32(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(Zlib.crc32([]) == 0)
        #expect(Zlib.crc32(Array("6789".utf8), initial: Zlib.crc32(Array("12345".utf8))) == 0xCBF4_3926)
    }

    @Test("compress/decompress round-trips empty, small and multi-megabyte data")
    func roundTrip() throws {
        var random = TestRandom(state: 11)
        for size in [0, 1, 100, 70_000, 3 << 20] {
            let data = (0..<size).map { i in i % 3 == 0 ? random.byte() : UInt8(truncatingIfNeeded: i / 64) }
            let compressed = try Zlib.compress(data)
            #expect(try Zlib.decompress(compressed, expectedSize: size) == data)
            #expect(try Zlib.decompress(compressed, expectedSize: nil) == data)
        }
        let noise = (0..<50_000).map { _ in random.byte() }
        #expect(try Zlib.decompress(Zlib.compress(noise, level: 0), expectedSize: noise.count) == noise)
    }

    @Test("corrupt and truncated streams throw")
    func corrupt() throws {
        let compressed = try Zlib.compress(Array(repeating: 42, count: 10_000) + Array(0...255))
        #expect(throws: ImageCodecError.self) { try Zlib.decompress(Array(compressed.dropLast(5)), expectedSize: nil) }
        #expect(throws: ImageCodecError.self) { try Zlib.decompress([], expectedSize: nil) }
        #expect(throws: ImageCodecError.self) { try Zlib.decompress([0x78, 0x9C, 0xFF, 0xFF, 0xFF], expectedSize: nil) }
        var badAdler = compressed
        badAdler[badAdler.count - 1] ^= 1
        #expect(throws: ImageCodecError.self) { try Zlib.decompress(badAdler, expectedSize: nil) }
        #expect(throws: ImageCodecError.self) { try Zlib.compress([1], level: 12) }
    }
}

// MARK: - PPM / PGM

@Suite("ImageCodec: PPM and PGM")
struct ImageCodecPNMTests {
    @Test("binary PPM round-trips opaque colour images")
    func ppmRoundTrip() throws {
        for (width, height) in [(1, 1), (5, 3), (33, 17)] {
            let image = try randomImage(width: width, height: height, seed: UInt64(width), kind: .rgb)
            let ppm = try PNMCodec.encode(image, as: .ppm)
            #expect(ppm.starts(with: Array("P6\n\(width) \(height)\n255\n".utf8)))
            #expect(try PNMCodec.decode(ppm) == image)
            #expect(try ImageCodec.decode(ImageCodec.encode(image, as: .ppm)) == image)
        }
    }

    @Test("binary PGM round-trips grey images and converts colour to luma")
    func pgmRoundTrip() throws {
        let gray = try randomImage(width: 19, height: 7, seed: 8, kind: .gray)
        let pgm = try PNMCodec.encode(gray, as: .pgm)
        #expect(pgm.count == "P5\n19 7\n255\n".utf8.count + 19 * 7)
        #expect(try PNMCodec.decode(pgm) == gray)
        let colour = try RGBAImage(width: 1, height: 1, pixels: [255, 0, 0, 255])
        #expect(try PNMCodec.decode(PNMCodec.encode(colour, as: .pgm)).pixels == [76, 76, 76, 255])
        #expect(throws: ImageCodecError.self) { try PNMCodec.encode(gray, as: .png) }
    }

    @Test("ASCII P3/P2 with comments, other maxvals and 16-bit samples")
    func asciiAndMaxval() throws {
        let p3 = "P3\n# a comment\n2 1 # another\n255\n255 0 0\n# mid-raster comment\n0 128 255\n"
        #expect(try PNMCodec.decode(Array(p3.utf8)).pixels == [255, 0, 0, 255, 0, 128, 255, 255])
        let p2 = "P2 3 1 15 0 15 7"
        #expect(try PNMCodec.decode(Array(p2.utf8)).pixels == [0, 0, 0, 255, 255, 255, 255, 255, 119, 119, 119, 255])
        let p5 = Array("P5\n2 1\n65535\n".utf8) + [0xFF, 0xFF, 0x80, 0x00]
        #expect(try PNMCodec.decode(p5).pixels == [255, 255, 255, 255, 128, 128, 128, 255])
        let p6 = Array("P6 1 1 3\n".utf8) + [3, 0, 1]
        #expect(try PNMCodec.decode(p6).pixels == [255, 0, 85, 255])
    }

    @Test("truncated and corrupt PNM input throws the right error")
    func malformed() throws {
        let valid = try PNMCodec.encode(RGBAImage.gradient(width: 4, height: 3), as: .ppm)
        for length in 0..<valid.count {
            #expect(throws: ImageCodecError.self, "prefix \(length)") { try PNMCodec.decode(Array(valid[..<length])) }
        }
        #expect(throws: ImageCodecError.notPNM) { try PNMCodec.decode(Array("hello".utf8)) }
        #expect(throws: ImageCodecError.unsupported("PBM bitmaps (P1/P4); convert to PGM or PNG")) { try PNMCodec.decode(Array("P4 1 1\n\0".utf8)) }
        #expect(throws: ImageCodecError.corrupt("maxval 0 is outside 1…65535")) { try PNMCodec.decode(Array("P5 1 1 0\n\0".utf8)) }
        #expect(throws: ImageCodecError.corrupt("sample 1 is 300, above the maxval 255")) { try PNMCodec.decode(Array("P2 2 1 255 1 300".utf8)) }
        #expect(throws: ImageCodecError.corrupt("sample 0 is not a number")) { try PNMCodec.decode(Array("P2 1 1 255 x".utf8)) }
        #expect(throws: ImageCodecError.corrupt("the header's width is not a number")) { try PNMCodec.decode(Array("P6 w 1 255\n".utf8)) }
        #expect(throws: ImageCodecError.tooLarge(width: 99_999, height: 99_999)) { try PNMCodec.decode(Array("P6 99999 99999 255\n".utf8)) }
        #expect(throws: ImageCodecError.truncated("the pixel data holds 3 of 30000 bytes")) {
            try PNMCodec.decode(Array("P6 100 100 255\n".utf8) + [1, 2, 3])
        }
    }
}

// MARK: - Formats and the facade

@Suite("ImageCodec: format detection")
struct ImageCodecFormatTests {
    @Test("formats from file extensions", arguments: [
        ("PNG", .png), (".ppm", .ppm), ("pnm", .ppm), ("pgm", .pgm), ("jpg", nil),
    ] as [(String, ImageFormat?)])
    func fileExtension(_ fileExtension: String, _ expected: ImageFormat?) {
        #expect(ImageFormat(fileExtension: fileExtension) == expected)
    }

    @Test("formats from URLs, and their MIME types")
    func urlsAndMIMETypes() {
        #expect(ImageFormat(url: URL(fileURLWithPath: "/tmp/Picture.Png")) == .png)
        #expect(ImageFormat.png.mimeType == "image/png")
    }

    @Test("formats from magic bytes", arguments: [
        ("P6\n1 1\n255\n", .ppm), ("P3 1 1 255", .ppm), ("P5#c\n", .pgm), ("P2\t", .pgm), ("Plain text", nil), ("", nil),
    ] as [(String, ImageFormat?)])
    func magic(_ text: String, _ expected: ImageFormat?) {
        #expect(ImageFormat(magicBytes: Array(text.utf8)) == expected)
    }

    @Test("a PNG is recognised by its magic bytes; what no format claims is refused")
    func magicOfFiles() throws {
        #expect(ImageFormat(magicBytes: try CodecFixtures.bytes("gray1")) == .png)
        #expect(throws: ImageCodecError.unknownFormat) { try ImageCodec.decode(Data("GIF89a".utf8)) }
        #expect(throws: ImageCodecError.self) { try ImageCodec.decode(Data()) }
    }

    @Test("ImageCodec round-trips through every format")
    func facade() throws {
        let image = RGBAImage.gradient(width: 21, height: 13)
        for format in ImageFormat.allCases {
            let decoded = try ImageCodec.decode(ImageCodec.encode(image, as: format))
            #expect(decoded == (format == .pgm ? image.grayscaled() : image), "\(format)")
        }
    }

    @Test("every error has a description and a suggestion")
    func messages() {
        let errors: [ImageCodecError] = [
            .notPNG, .notPNM, .unknownFormat, .truncated("x"), .corrupt("x"), .unsupported("x"),
            .checksumMismatch(chunk: "IDAT"), .tooLarge(width: 1, height: 2), .invalidDimensions(width: 0, height: 0),
            .pixelCountMismatch(expected: 4, actual: 3), .outOfBounds("x"), .decompressedDataTooLarge(limit: 1),
            .compressionFailed("x"),
        ]
        for error in errors {
            #expect(error.errorDescription?.isEmpty == false)
            #expect(error.recoverySuggestion?.isEmpty == false)
        }
    }
}

// MARK: - RGBAImage

@Suite("ImageCodec: RGBAImage")
struct ImageCodecRGBAImageTests {
    @Test("initialisers validate sizes")
    func validation() throws {
        #expect(throws: ImageCodecError.invalidDimensions(width: 0, height: 1)) { try RGBAImage(width: 0, height: 1, pixels: []) }
        #expect(throws: ImageCodecError.invalidDimensions(width: 40_000, height: 1)) { try RGBAImage(width: 40_000, height: 1) }
        #expect(throws: ImageCodecError.pixelCountMismatch(expected: 8, actual: 4)) { try RGBAImage(width: 2, height: 1, pixels: [0, 0, 0, 0]) }
        let filled = try RGBAImage(width: 2, height: 2, fill: RGBAPixel(r: 1, g: 2, b: 3))
        #expect(filled.pixels == Array([[UInt8]](repeating: [1, 2, 3, 255], count: 4).joined()))
        #expect(filled.isOpaque)
        #expect(try !RGBAImage(width: 1, height: 1).isOpaque)
    }

    @Test("pixel accessors")
    func accessors() throws {
        var image = try RGBAImage(width: 3, height: 2)
        image[2, 1] = RGBAPixel(r: 9, g: 8, b: 7, a: 6)
        #expect(image[2, 1] == RGBAPixel(r: 9, g: 8, b: 7, a: 6))
        #expect(Array(image.pixels[20...]) == [9, 8, 7, 6])
        try image.setPixel(RGBAPixel(r: 1, g: 1, b: 1), x: 0, y: 0)
        #expect(image.pixel(x: 0, y: 0) == RGBAPixel(r: 1, g: 1, b: 1, a: 255))
        #expect(image.pixel(x: 3, y: 0) == nil)
        #expect(image.pixel(x: -1, y: 0) == nil)
        #expect(throws: ImageCodecError.self) { try image.setPixel(RGBAPixel(r: 0, g: 0, b: 0), x: 0, y: Int.max) }
        // The subscript never traps: outside reads as transparent black, writes there are ignored.
        let before = image
        image[3, 0] = RGBAPixel(r: 5, g: 5, b: 5)
        image[Int.min, Int.max] = RGBAPixel(r: 5, g: 5, b: 5)
        #expect(image == before)
        #expect(image[-1, 0] == RGBAPixel(r: 0, g: 0, b: 0, a: 0))
        #expect(image[0, Int.max] == RGBAPixel(r: 0, g: 0, b: 0, a: 0))
        image.pixels.removeLast(4)
        #expect(image[2, 1] == RGBAPixel(r: 0, g: 0, b: 0, a: 0), "a pixel past a shortened buffer")
    }

    @Test("rotation is clockwise and accepts any integer")
    func rotation() throws {
        // 2×1 image: [A B] rotated clockwise becomes a column with A on top.
        let a = RGBAPixel(r: 1, g: 0, b: 0), b = RGBAPixel(r: 2, g: 0, b: 0)
        var image = try RGBAImage(width: 2, height: 1)
        image[0, 0] = a
        image[1, 0] = b
        let cw = image.rotated(quarterTurns: 1)
        #expect(cw.width == 1 && cw.height == 2 && cw[0, 0] == a && cw[0, 1] == b)
        let ccw = image.rotated(quarterTurns: -1)
        #expect(ccw[0, 0] == b && ccw[0, 1] == a)
        #expect(image.rotated(quarterTurns: 2)[0, 0] == b)
        let odd = try randomImage(width: 7, height: 4, seed: 1, kind: .rgba)
        #expect(odd.rotated(quarterTurns: 4) == odd)
        #expect(odd.rotated(quarterTurns: 3) == odd.rotated(quarterTurns: -1))
        #expect(odd.rotated(quarterTurns: 1).rotated(quarterTurns: 1) == odd.rotated(quarterTurns: 2))
        #expect(odd.rotated(quarterTurns: 1).rotated(quarterTurns: -5) == odd)
        #expect(odd.rotated(quarterTurns: 1)[3, 0] == odd[0, 0]) // top-left goes to top-right
    }

    @Test("cropping checks its rectangle")
    func crop() throws {
        let image = RGBAImage.gradient(width: 10, height: 8)
        let part = try image.cropped(x: 2, y: 3, width: 4, height: 5)
        #expect(part.width == 4 && part.height == 5 && part[0, 0] == image[2, 3] && part[3, 4] == image[5, 7])
        #expect(try image.cropped(x: 0, y: 0, width: 10, height: 8) == image)
    }

    @Test("a rectangle that is empty or leaves the image is refused", arguments: [
        (-1, 0, 2, 2), (0, 0, 11, 1), (9, 7, 2, 1), (0, 0, 0, 1), (10, 0, 1, 1), (Int.max, 0, 1, 1), (1, 1, Int.max, 1),
    ])
    func cropOutside(x: Int, y: Int, width: Int, height: Int) {
        let image = RGBAImage.gradient(width: 10, height: 8)
        #expect(throws: ImageCodecError.self) { try image.cropped(x: x, y: y, width: width, height: height) }
    }

    @Test("grayscale, invert and generators")
    func operations() throws {
        let image = try RGBAImage(width: 2, height: 1, pixels: [255, 0, 0, 10, 10, 200, 30, 255])
        #expect(image.inverted().pixels == [0, 255, 255, 10, 245, 55, 225, 255])
        #expect(image.inverted().inverted() == image)
        let gray = image.grayscaled()
        #expect(gray.pixels[0] == 76 && gray.pixels[1] == 76 && gray.pixels[3] == 10)
        #expect(gray.pixels[4] == 124)
        let gradient = RGBAImage.gradient(width: 5, height: 3)
        #expect(gradient[0, 0] == RGBAPixel(r: 0, g: 0, b: 0) && gradient[4, 2] == RGBAPixel(r: 255, g: 255, b: 255))
        let board = RGBAImage.checkerboard(width: 4, height: 4, cell: 2)
        #expect(board[0, 0].r == 255 && board[2, 0].r == 0 && board[2, 2].r == 255 && board[1, 3].r == 0)
        #expect(RGBAImage.checkerboard(width: 0, height: -3, cell: 0).pixelCount == 1)
    }
}
