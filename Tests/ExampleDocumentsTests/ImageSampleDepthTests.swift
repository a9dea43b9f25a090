import Foundation
import Testing
@testable import ExampleDocuments

@Suite("ImageSampleDepth: bit depth from a file's header")
struct ImageSampleDepthTests {
    private func fixture(_ name: String) throws -> [UInt8] {
        let url = try #require(Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Fixtures"))
        return [UInt8](try Data(contentsOf: url))
    }

    @Test("PNG headers: depth and channels as stored",
          arguments: [("rgb16.png", 16, "RGB"), ("rgba16.png", 16, "RGBA"), ("gray16.png", 16, "gray"),
                      ("rgb8.png", 8, "RGB"), ("gray-alpha8.png", 8, "gray + alpha"), ("gray2.png", 2, "gray"),
                      ("palette8.png", 8, "palette")])
    func png(_ name: String, _ bits: Int, _ channels: String) throws {
        let depth = try #require(ImageSampleDepth(header: try fixture(name)))
        #expect(depth.format == .png && depth.bitsPerChannel == bits && depth.channels == channels)
        #expect(depth.exceedsEightBits == (bits > 8))
    }

    @Test("Netpbm headers: bits from maxval, comments allowed")
    func netpbm() throws {
        let cases: [(String, Int, String, String)] = [
            ("P6\n2 2\n255\n", 8, "RGB", "8 bits per channel, RGB"),
            ("P5 # comment\n2 2\n65535\n", 16, "gray", "16 bits per channel, gray"),
            ("P3\n2 2\n1023\n", 10, "RGB", "10 bits per channel (maxval 1023), RGB"),
            ("P2\n1 1\n1\n", 1, "gray", "1 bit per channel (maxval 1), gray"),
        ]
        for (header, bits, channels, text) in cases {
            let depth = try #require(ImageSampleDepth(header: Array(header.utf8)), "\(header)")
            #expect(depth.bitsPerChannel == bits && depth.channels == channels, "\(header)")
            #expect(depth.description == text)
        }
    }

    @Test("truncated or foreign headers give nil, never a trap")
    func malformed() throws {
        let png = try fixture("rgb16.png")
        for length in 0..<26 { #expect(ImageSampleDepth(header: png.prefix(length)) == nil, "\(length)") }
        var badDepth = png
        badDepth[24] = 3  // not allowed for RGB
        #expect(ImageSampleDepth(header: badDepth) == nil)
    }

    @Test("truncated or foreign Netpbm and other headers give nil", arguments: [
        "P6\n2 2\n", "P6\n2 2\n0\n", "P6\n2 2\n70000\n", "P6 x", "GIF89a", "",
    ])
    func malformedText(_ text: String) {
        #expect(ImageSampleDepth(header: Array(text.utf8)) == nil)
    }
}
