import ExampleDocuments
import Foundation

/// What image-tool reads from a file's first bytes itself (under a coordinated read), besides
/// what the document decodes: the magic number, the size on disk and the bit depth.
struct SourceHeader {
    /// The first bytes (up to 4 KiB: enough for any Netpbm header with comments).
    let bytes: [UInt8]
    /// The file's size, or `nil` when it could not be found out.
    let size: Int?
    /// Bits per channel as stored, or `nil` for a header this module cannot read.
    var depth: ImageSampleDepth? { ImageSampleDepth(header: bytes) }

    /// Reads the header of the file at `url` in a coordinated read.
    ///
    /// - Throws: the coordination error, or the error opening or reading the file.
    static func read(_ url: URL) throws -> SourceHeader {
        try Coordinator().coordinate(readingItemAt: url) { readURL in
            let handle = try FileHandle(forReadingFrom: readURL)
            defer { try? handle.close() }
            let head = try handle.read(upToCount: 4096) ?? Data()
            let size = try? FileManager.default.attributesOfItem(atPath: readURL.path)[.size] as? NSNumber
            return SourceHeader(bytes: [UInt8](head), size: size?.intValue)
        }
    }

    /// The note to add when saving an image read from this file keeps only 8 bits per channel:
    /// " (16 bits per channel reduced to 8)", or "" when nothing is lost.
    var reductionNote: String {
        guard let depth, depth.exceedsEightBits else { return "" }
        return " (\(depth.bitsPerChannel) bits per channel reduced to 8)"
    }
}
