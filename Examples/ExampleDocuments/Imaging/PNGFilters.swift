// The five PNG scanline filters (None, Sub, Up, Average, Paeth): reversing them when decoding
// and choosing/applying them when encoding. Hot loops work on raw pointers; every caller sizes
// the buffers from the validated header, and the loops never step outside `rowBytes`.

enum PNGFilters {
    @inline(__always)
    static func paeth(_ a: UInt8, _ b: UInt8, _ c: UInt8) -> UInt8 {
        // p = a + b - c; the distances |p-a|, |p-b|, |p-c| simplify to |b-c|, |a-c|, |a+b-2c|.
        let db = Int32(b) &- Int32(c), da = Int32(a) &- Int32(c)
        let pa = db < 0 ? 0 &- db : db
        let pb = da < 0 ? 0 &- da : da
        let sum = da &+ db
        let pc = sum < 0 ? 0 &- sum : sum
        if pa <= pb && pa <= pc { return a }
        return pb <= pc ? b : c
    }

    /// Reverses the filters in place over `rows` scanlines, each `1 + rowBytes` bytes long
    /// (filter-type byte first). `bpp` is ``PNGHeader/filterStride``.
    ///
    /// - Throws: ``ImageCodecError/corrupt(_:)`` for a filter type other than 0…4.
    static func unfilter(_ data: UnsafeMutablePointer<UInt8>, rows: Int, rowBytes: Int, bpp: Int) throws {
        let stride = rowBytes + 1
        let head = min(bpp, rowBytes)
        for row in 0..<rows {
            let line = data + row * stride + 1
            let filter = line[-1]
            let prev: UnsafeMutablePointer<UInt8>? = row > 0 ? line - stride : nil
            switch filter {
            case 0:
                break
            case 1:
                sub(line, rowBytes, bpp)
            case 2:
                if let prev {
                    for i in 0..<rowBytes { line[i] &+= prev[i] }
                }
            case 3:
                if let prev {
                    for i in 0..<head { line[i] &+= prev[i] >> 1 }
                    var i = head
                    while i < rowBytes {
                        line[i] &+= UInt8(truncatingIfNeeded: (UInt16(line[i - bpp]) + UInt16(prev[i])) >> 1)
                        i += 1
                    }
                } else {
                    var i = head
                    while i < rowBytes {
                        line[i] &+= line[i - bpp] >> 1
                        i += 1
                    }
                }
            case 4:
                if let prev {
                    for i in 0..<head { line[i] &+= prev[i] }
                    var i = head
                    while i < rowBytes {
                        line[i] &+= paeth(line[i - bpp], prev[i], prev[i - bpp])
                        i += 1
                    }
                } else {
                    sub(line, rowBytes, bpp) // Paeth with an all-zero previous row is Sub.
                }
            default:
                throw ImageCodecError.corrupt("scanline \(row) uses filter type \(filter), which PNG does not define")
            }
        }
    }

    @inline(__always)
    private static func sub(_ line: UnsafeMutablePointer<UInt8>, _ rowBytes: Int, _ bpp: Int) {
        var i = bpp
        while i < rowBytes {
            line[i] &+= line[i - bpp]
            i += 1
        }
    }

    /// Filters one scanline for the encoder: tries all five filters, keeps the one with the
    /// smallest sum of absolute (signed) differences, and writes the filter byte followed by
    /// `rowBytes` filtered bytes to `out`. `prev` is the previous raw scanline, or an all-zero
    /// row for the first one. Never fails.
    ///
    /// Encoding only reads raw (unfiltered) bytes, so every byte's predictions are independent
    /// and the bulk of the row is processed eight bytes at a time with SIMD.
    static func filterRow(_ cur: UnsafePointer<UInt8>, prev: UnsafePointer<UInt8>, rowBytes: Int, bpp: Int,
                          into out: UnsafeMutablePointer<UInt8>) {
        @inline(__always) func cost(_ v: UInt8) -> Int { Int(v < 128 ? v : 0 &- v) }
        let head = min(bpp, rowBytes)
        var sNone = 0, sSub = 0, sUp = 0, sAvg = 0, sPaeth = 0
        for i in 0..<head {
            let x = cur[i], b = prev[i]
            sNone &+= cost(x)
            sSub &+= cost(x)
            sUp &+= cost(x &- b)
            sAvg &+= cost(x &- (b >> 1))
            sPaeth &+= cost(x &- b)
        }
        // Vector part: per-lane sums stay below 128 × 240 < Int16.max before each flush.
        var i = head
        while rowBytes - i >= laneCount {
            var vNone = Lanes(), vSub = Lanes(), vUp = Lanes(), vAvg = Lanes(), vPaeth = Lanes()
            var rounds = 0
            while rowBytes - i >= laneCount && rounds < 240 {
                let v = Vectors(cur, prev, i, bpp)
                vNone &+= v.cost(Lanes())
                vSub &+= v.cost(v.a)
                vUp &+= v.cost(v.b)
                vAvg &+= v.cost(v.average)
                vPaeth &+= v.cost(v.paeth)
                i += laneCount
                rounds += 1
            }
            sNone &+= Self.total(vNone); sSub &+= Self.total(vSub); sUp &+= Self.total(vUp)
            sAvg &+= Self.total(vAvg); sPaeth &+= Self.total(vPaeth)
        }
        let tail = i
        while i < rowBytes {
            let x = cur[i], a = cur[i - bpp], b = prev[i], c = prev[i - bpp]
            sNone &+= cost(x)
            sSub &+= cost(x &- a)
            sUp &+= cost(x &- b)
            sAvg &+= cost(x &- UInt8(truncatingIfNeeded: (UInt16(a) + UInt16(b)) >> 1))
            sPaeth &+= cost(x &- paeth(a, b, c))
            i += 1
        }

        var best: UInt8 = 0
        var bestSum = sNone
        if sSub < bestSum { best = 1; bestSum = sSub }
        if sUp < bestSum { best = 2; bestSum = sUp }
        if sAvg < bestSum { best = 3; bestSum = sAvg }
        if sPaeth < bestSum { best = 4; bestSum = sPaeth }
        out[0] = best
        let dst = out + 1
        if best == 0 {
            dst.update(from: cur, count: rowBytes)
            return
        }
        // The first `bpp` bytes have no left neighbour (a = c = 0).
        for i in 0..<head {
            let b = prev[i]
            switch best {
            case 1: dst[i] = cur[i]
            case 3: dst[i] = cur[i] &- (b >> 1)
            default: dst[i] = cur[i] &- b
            }
        }
        i = head
        let raw = UnsafeMutableRawPointer(dst)
        while i < tail {
            let v = Vectors(cur, prev, i, bpp)
            let prediction: Lanes
            switch best {
            case 1: prediction = v.a
            case 2: prediction = v.b
            case 3: prediction = v.average
            default: prediction = v.paeth
            }
            raw.storeBytes(of: SIMD8<UInt8>(truncatingIfNeeded: v.x &- prediction), toByteOffset: i, as: SIMD8<UInt8>.self)
            i += laneCount
        }
        while i < rowBytes {
            let a = cur[i - bpp], b = prev[i], c = prev[i - bpp]
            switch best {
            case 1: dst[i] = cur[i] &- a
            case 2: dst[i] = cur[i] &- b
            case 3: dst[i] = cur[i] &- UInt8(truncatingIfNeeded: (UInt16(a) + UInt16(b)) >> 1)
            default: dst[i] = cur[i] &- paeth(a, b, c)
            }
            i += 1
        }
    }

    typealias Lanes = SIMD8<Int16>
    private static let laneCount = 8

    @inline(__always)
    private static func total(_ lanes: Lanes) -> Int {
        Int(SIMD8<Int32>(truncatingIfNeeded: lanes).wrappedSum())
    }

    /// Eight consecutive bytes of the current row (x), their left neighbours (a), the bytes
    /// above (b) and above-left (c), widened to 16 bits. Requires `i >= bpp` and `i + 8 <= rowBytes`.
    private struct Vectors {
        let x: Lanes, a: Lanes, b: Lanes, c: Lanes

        @inline(__always)
        init(_ cur: UnsafePointer<UInt8>, _ prev: UnsafePointer<UInt8>, _ i: Int, _ bpp: Int) {
            @inline(__always) func load(_ p: UnsafePointer<UInt8>) -> Lanes {
                Lanes(truncatingIfNeeded: UnsafeRawPointer(p).loadUnaligned(as: SIMD8<UInt8>.self))
            }
            x = load(cur + i); a = load(cur + i - bpp); b = load(prev + i); c = load(prev + i - bpp)
        }

        var average: Lanes { (a &+ b) &>> 1 }

        var paeth: Lanes {
            let da = a &- c, db = b &- c, dsum = da &+ db
            let pa = pointwiseMax(db, 0 &- db), pb = pointwiseMax(da, 0 &- da), pc = pointwiseMax(dsum, 0 &- dsum)
            return c.replacing(with: b, where: pb .<= pc).replacing(with: a, where: (pa .<= pb) .& (pa .<= pc))
        }

        /// |residual| as a signed byte, in 0…128.
        @inline(__always)
        func cost(_ prediction: Lanes) -> Lanes {
            let r = (x &- prediction) & 0xFF
            return pointwiseMin(r, 256 &- r)
        }
    }
}
