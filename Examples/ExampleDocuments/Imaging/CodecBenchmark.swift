/// A quick PNG throughput measurement for the benchmark executables.
public enum CodecBenchmark {
    /// Encodes and decodes a photo-like `width` × `height` RGBA image (smooth gradients plus
    /// noise and a translucent band) a few times and reports the best speeds in megabytes
    /// (10⁶ bytes) of raw RGBA per second, and the compressed PNG size.
    ///
    /// Never throws: sides are clamped to `1...RGBAImage.maxDimension`, and if encoding or
    /// decoding fails (which would be a bug) the corresponding speed is reported as 0.
    public static func measure(width: Int = 1024, height: Int = 1024) -> (encodeMBps: Double, decodeMBps: Double, compressedBytes: Int) {
        let image = photoLikeImage(width: width, height: height)
        let megabytes = Double(image.pixels.count) / 1_000_000
        let clock = ContinuousClock()
        let rounds = 3
        var bestEncode = Duration.seconds(1_000_000), bestDecode = Duration.seconds(1_000_000)
        var encoded: [UInt8] = []
        for _ in 0..<rounds {
            var result: [UInt8]?
            let elapsed = clock.measure { result = try? PNGEncoder.encode(image) }
            guard let result else { return (0, 0, 0) }
            encoded = result
            bestEncode = min(bestEncode, elapsed)
        }
        for _ in 0..<rounds {
            var decoded: RGBAImage?
            let elapsed = clock.measure { decoded = try? PNGDecoder.decode(encoded) }
            guard decoded == image else { return (megabytes / seconds(bestEncode), 0, encoded.count) }
            bestDecode = min(bestDecode, elapsed)
        }
        return (megabytes / seconds(bestEncode), megabytes / seconds(bestDecode), encoded.count)
    }

    private static func seconds(_ d: Duration) -> Double {
        let c = d.components
        return max(Double(c.seconds) + Double(c.attoseconds) * 1e-18, 1e-9)
    }

    /// Smooth colour gradients with ±6 of deterministic noise per channel, and a band of
    /// partial transparency so the encoder has to write RGBA.
    static func photoLikeImage(width: Int, height: Int) -> RGBAImage {
        let base = RGBAImage.gradient(width: width, height: height)
        var pixels = base.pixels
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        let w = base.width, h = base.height
        pixels.withUnsafeMutableBufferPointer { p in
            for y in 0..<h {
                for x in 0..<w {
                    let i = (y * w + x) * 4
                    for c in 0..<3 {
                        state ^= state << 13; state ^= state >> 7; state ^= state << 17
                        let noise = Int(state % 13) - 6
                        p[i + c] = UInt8(clamping: Int(p[i + c]) + noise)
                    }
                    if y * 8 / h == 3 { p[i + 3] = UInt8(truncatingIfNeeded: 128 + (x * 127) / max(w - 1, 1)) }
                }
            }
        }
        return RGBAImage(uncheckedWidth: w, height: h, pixels: pixels)
    }
}
