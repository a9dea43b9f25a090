import BenchmarkSupport
import CloudDocuments
import Foundation
import Glibc

/// The 16 MiB file of (c), with bytes that do not compress or deduplicate.
enum BigFile {
    static let size = 16 << 20

    static func make(in base: URL) throws -> URL {
        let folder = base.appendingPathComponent("big")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var bytes = [UInt8](repeating: 0, count: size)
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for index in bytes.indices {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            bytes[index] = UInt8(truncatingIfNeeded: state >> 56)
        }
        let url = folder.appendingPathComponent("doc.bin")
        try Data(bytes).write(to: url)
        return url
    }
}

/// (c) `FileVersion.addOfItem(at:withContentsOf:)` of a 16 MiB file (the item's own contents, as
/// in Docs/Versions.md) ÷ a raw durable copy into a folder beside the store. Both raw methods are
/// measured; the ratio is against the faster. Interleaved, 25 rounds after 1 of warm-up; after
/// each round (untimed) the copies and the version are removed and `sync()` empties the disk's
/// queue, so every round starts from the same state. Medians.
enum AddBenchmark {
    static func run(in base: URL) throws {
        let item = try BigFile.make(in: base)
        let rawFolder = base.appendingPathComponent("raw-copies").path
        try FileManager.default.createDirectory(atPath: rawFolder, withIntermediateDirectories: true)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 4096)
        defer { buffer.deallocate() }
        sync()

        var rangeCopy: [Double] = [], readWrite: [Double] = [], added: [Double] = [], storeSteps: [Double] = []
        for round in 0..<26 {
            let range = Measure.time {
                precondition(RawFileSystem.durableCopy(item.path, into: rawFolder, name: "range", method: .copyFileRange,
                                                       buffer: buffer), "raw copy failed")
            }
            let plain = Measure.time {
                precondition(RawFileSystem.durableCopy(item.path, into: rawFolder, name: "plain", method: .readWrite,
                                                       buffer: buffer), "raw copy failed")
            }
            let add = try Measure.time { try FileVersion.addOfItem(at: item, withContentsOf: item) }
            let steps = Measure.time {
                precondition(RawFileSystem.durableVersionFolder(item.path, into: rawFolder, name: "steps"), "raw copy failed")
            }
            if round >= 1 {
                rangeCopy.append(range)
                readWrite.append(plain)
                added.append(add)
                storeSteps.append(steps)
            }
            unlink(rawFolder + "/range")
            unlink(rawFolder + "/plain")
            for path in ["/steps.version/data/steps", "/steps.version/version.json"] { unlink(rawFolder + path) }
            for path in ["/steps.version/data", "/steps.version"] { rmdir(rawFolder + path) }
            try FileVersion.removeOtherVersionsOfItem(at: item)
            sync()
        }
        let range = Measure.median(rangeCopy), plain = Measure.median(readWrite), add = Measure.median(added)
        let raw = min(range, plain)
        let ratio = add / raw
        row("(c) `addOfItem` of a 16 MiB file ÷ raw durable copy",
            "\(ms(range)) (copy_file_range) / \(ms(plain)) (read/write) ms", ms(add) + " ms",
            format(ratio) + " ×", "≤ 1.15 ×", verdict(ratio, atMost: 1.15))
        let steps = Measure.median(storeSteps)
        row("  same, raw syscalls doing the store's durable steps (2 files, 3 folders `fsync`ed)",
            ms(steps) + " ms", ms(add) + " ms", format(add / steps) + " × (steps ÷ raw copy: \(format(steps / raw)) ×)", "", "")
    }
}
