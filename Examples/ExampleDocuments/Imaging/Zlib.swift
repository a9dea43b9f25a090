import CZlib

/// Thin, memory-safe wrappers over the system zlib (RFC 1950 streams, as PNG uses them).
///
/// All functions stream through zlib in bounded steps, so inputs larger than 4 GiB work, and
/// never trap on corrupt input: every zlib failure becomes an ``ImageCodecError``.
enum Zlib {
    /// Largest number of bytes handed to zlib per call (`avail_in`/`avail_out` are 32-bit).
    private static let maxStep = 1 << 30

    /// The most a deflate stream can expand (deflate's best case is about 1032 : 1). Used to
    /// size the first output buffer from the input, not from a header that may lie.
    private static let maxRatio = 1_040

    /// Compresses `data` into a zlib stream.
    ///
    /// - Parameters:
    ///   - level: 0 (store) … 9 (smallest); -1 means zlib's default (6).
    ///   - strategy: a zlib strategy such as `Z_DEFAULT_STRATEGY` or `Z_FILTERED`.
    /// - Throws: ``ImageCodecError/compressionFailed(_:)`` for an invalid level or when zlib
    ///   runs out of memory.
    static func compress(_ data: [UInt8], level: Int32 = 6, strategy: Int32 = Z_DEFAULT_STRATEGY) throws -> [UInt8] {
        guard (-1...9).contains(level) else {
            throw ImageCodecError.compressionFailed("compression level \(level) is not in -1…9")
        }
        var stream = z_stream()
        let initResult = deflateInit2_(&stream, level, Z_DEFLATED, MAX_WBITS, 8, strategy,
                                       ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard initResult == Z_OK else { throw error(initResult, stream, "deflateInit") }
        defer { deflateEnd(&stream) }

        // deflateBound is exact enough that one buffer normally suffices; the loop grows it otherwise.
        let bound = Int(deflateBound(&stream, uLong(min(data.count, Int(UInt32.max)))))
        var output = [UInt8](repeating: 0, count: max(bound, 64))
        var produced = 0
        var consumed = 0
        try data.withUnsafeBufferPointer { input in
            while true {
                let inStep = min(input.count - consumed, maxStep)
                let finishing = consumed + inStep == input.count
                stream.next_in = input.baseAddress.map { UnsafeMutablePointer(mutating: $0 + consumed) }
                stream.avail_in = uInt(inStep)
                var result: Int32
                repeat {
                    if produced == output.count {
                        output.append(contentsOf: repeatElement(0, count: max(output.count / 2, 4_096)))
                    }
                    let outStep = min(output.count - produced, maxStep)
                    let pendingInput = stream.avail_in
                    result = output.withUnsafeMutableBufferPointer { out -> Int32 in
                        stream.next_out = out.baseAddress.map { $0 + produced }
                        stream.avail_out = uInt(outStep)
                        return deflate(&stream, finishing ? Z_FINISH : Z_NO_FLUSH)
                    }
                    let written = outStep - Int(stream.avail_out)
                    produced += written
                    stream.next_out = nil
                    if result == Z_STREAM_END { break }
                    guard result == Z_OK || result == Z_BUF_ERROR else { throw error(result, stream, "deflate") }
                    if written == 0 && stream.avail_in == pendingInput && stream.avail_out > 0 {
                        throw error(result, stream, "deflate made no progress")
                    }
                } while stream.avail_in > 0 || (finishing && result != Z_STREAM_END)
                consumed += inStep
                stream.next_in = nil
                if finishing { break }
            }
        }
        output.removeSubrange(produced...)
        return output
    }

    /// Inflates a zlib stream.
    ///
    /// - Parameters:
    ///   - expectedSize: the number of bytes the caller expects (for PNG: what IHDR implies).
    ///     It is a hard upper bound: if the stream would produce more, decoding stops with
    ///     ``ImageCodecError/decompressedDataTooLarge(limit:)``. A shorter result is returned as
    ///     is; the caller decides whether that is an error. Memory is allocated as data
    ///     actually arrives, never up front from `expectedSize` alone.
    ///   - limit: the upper bound used when `expectedSize` is `nil` (default 1 GiB).
    /// - Throws: ``ImageCodecError/truncated(_:)`` when the stream ends early,
    ///   ``ImageCodecError/corrupt(_:)`` when zlib reports invalid data or a bad Adler-32,
    ///   ``ImageCodecError/decompressedDataTooLarge(limit:)`` past the bound, and
    ///   ``ImageCodecError/compressionFailed(_:)`` when zlib runs out of memory.
    static func decompress(_ data: [UInt8], expectedSize: Int?, limit: Int = 1 << 30) throws -> [UInt8] {
        let cap = min(max(0, expectedSize ?? limit), Int.max - 1)
        var stream = z_stream()
        let initResult = inflateInit_(&stream, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard initResult == Z_OK else { throw error(initResult, stream, "inflateInit") }
        defer { inflateEnd(&stream) }

        // One byte beyond the cap lets us notice a stream that is longer than allowed.
        let plausible = data.count.multipliedReportingOverflow(by: maxRatio)
        let firstSize = min(cap + 1, plausible.overflow ? Int.max : plausible.partialValue + 1_024)
        var output = [UInt8](repeating: 0, count: max(firstSize, 1))
        var produced = 0
        var consumed = 0
        var finished = false
        try data.withUnsafeBufferPointer { input in
            while !finished {
                let inStep = min(input.count - consumed, maxStep)
                stream.next_in = input.baseAddress.map { UnsafeMutablePointer(mutating: $0 + consumed) }
                stream.avail_in = uInt(inStep)
                while true {
                    if produced == output.count {
                        guard output.count <= cap else { throw ImageCodecError.decompressedDataTooLarge(limit: cap) }
                        let grown = min(cap + 1, output.count.multipliedReportingOverflow(by: 2).partialValue)
                        output.append(contentsOf: repeatElement(0, count: max(grown - output.count, 1)))
                    }
                    let outStep = min(output.count - produced, maxStep)
                    let result = output.withUnsafeMutableBufferPointer { out -> Int32 in
                        stream.next_out = out.baseAddress.map { $0 + produced }
                        stream.avail_out = uInt(outStep)
                        return inflate(&stream, Z_NO_FLUSH)
                    }
                    stream.next_out = nil
                    produced += outStep - Int(stream.avail_out)
                    if produced > cap { throw ImageCodecError.decompressedDataTooLarge(limit: cap) }
                    switch result {
                    case Z_STREAM_END:
                        finished = true
                    case Z_OK:
                        if stream.avail_in == 0 && stream.avail_out > 0 { break } // needs more input
                        continue
                    case Z_BUF_ERROR:
                        // No progress possible: either output is full (grow it) or input ran out.
                        if stream.avail_out == 0 { continue }
                    case Z_DATA_ERROR, Z_NEED_DICT:
                        throw ImageCodecError.corrupt("compressed data is invalid (\(message(stream) ?? "zlib data error"))")
                    default:
                        throw error(result, stream, "inflate")
                    }
                    break
                }
                let used = inStep - Int(stream.avail_in)
                consumed += used
                stream.next_in = nil
                if !finished && consumed >= input.count {
                    throw ImageCodecError.truncated("the compressed data stream ends before its end marker")
                }
                if !finished && used == 0 {
                    throw ImageCodecError.corrupt("the compressed data stream makes no progress")
                }
            }
        }
        output.removeSubrange(produced...)
        return output
    }

    /// CRC-32 (as used by PNG chunks) of `bytes`, continuing from `initial`. Never fails.
    static func crc32(_ bytes: UnsafeRawBufferPointer, initial: UInt32 = 0) -> UInt32 {
        guard var base = bytes.baseAddress?.assumingMemoryBound(to: Bytef.self) else { return initial }
        var crc = uLong(initial)
        var remaining = bytes.count
        while remaining > 0 {
            let step = min(remaining, maxStep)
            crc = CZlib.crc32(crc, base, uInt(step))
            base += step
            remaining -= step
        }
        return UInt32(truncatingIfNeeded: crc)
    }

    /// CRC-32 of a byte array, continuing from `initial`. Never fails.
    static func crc32(_ bytes: [UInt8], initial: UInt32 = 0) -> UInt32 {
        bytes.withUnsafeBytes { crc32($0, initial: initial) }
    }

    // MARK: Errors

    private static func message(_ stream: z_stream) -> String? {
        stream.msg.map { String(cString: $0) }
    }

    private static func error(_ code: Int32, _ stream: z_stream, _ call: String) -> ImageCodecError {
        switch code {
        case Z_MEM_ERROR: return .compressionFailed("\(call): out of memory")
        case Z_VERSION_ERROR: return .compressionFailed("\(call): incompatible zlib version")
        case Z_DATA_ERROR: return .corrupt("compressed data is invalid (\(message(stream) ?? "zlib data error"))")
        default: return .compressionFailed("\(call) returned \(code)\(message(stream).map { ": \($0)" } ?? "")")
        }
    }
}
