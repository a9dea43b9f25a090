import Foundation
import Glibc
import Testing
import TestSupport
@testable import FileCoordination

/// `.forUploading` snapshots: streamed ZIP archives of folders (ZIP64 when needed), file copies,
/// and typed I/O errors. Archives are checked with Python's `zipfile` module (python3 is on
/// every machine these tests run on; a missing python3 fails the test with a message saying so).
@Suite("Upload snapshots")
struct UploadSnapshotTests {
    @Test("a folder of 70,000 files gives a valid archive with ZIP64 end records")
    func seventyThousandEntries() throws {
        let scratch = try Scratch()
        let folder = try scratch.directory("many")
        for index in 0..<70_000 {
            try #require(mknod(folder.path + "/f\(index)", S_IFREG | 0o644, 0) == 0, "file \(index): errno \(errno)")
        }
        let report = try Coordinator().coordinate(readingItemAt: folder, options: .forUploading) { snapshot in
            try ZipReport(snapshot)
        }
        #expect(report.bad == nil)
        #expect(report.entries.count == 70_000)
        #expect(report.hasZip64End, "more than 65,535 entries need the ZIP64 end record")
        #expect(report.entries.allSatisfy { $0.size == 0 })
    }

    @Test("a sparse file larger than 4 GiB, and a file after it, archive with ZIP64 sizes and offsets")
    func largerThanFourGiB() throws {
        let scratch = try Scratch()
        let folder = try scratch.directory("big")
        let bigLength: Int64 = 0x1_0000_0000 + 4097
        let big = open(folder.path + "/a-big.bin", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        try #require(big >= 0)
        try #require(ftruncate(big, off_t(bigLength)) == 0)  // sparse: no disk space used
        _ = pwrite(big, "head", 4, 0)
        _ = pwrite(big, "middle", 6, 0x8000_0000)
        _ = pwrite(big, "tail", 4, off_t(bigLength - 4))
        close(big)
        _ = scratch.file("big/b-after.txt", contents: "after the big one")

        // Reading 4 GiB back to check its CRC takes most of a minute (python3's testzip() and
        // `unzip -t` both pass when run by hand): here python3 checks the structure and the member
        // after the big one, and the big one's bytes are probed where data was written. The CRC
        // of its holes is the arithmetic checked in `crc32()`.
        let (report, probes) = try Coordinator().coordinate(readingItemAt: folder, options: .forUploading) { snapshot in
            let report = try ZipReport(snapshot, extracting: ["b-after.txt"], testingEveryCRC: false)
            let entry = try #require(report.entries.first { $0.name == "a-big.bin" })
            let probes = try Self.memberBytes(in: snapshot, headerOffset: entry.offset,
                                              at: [(0, 4), (0x8000_0000, 6), (Int(bigLength) - 4, 4)])
            return (report, probes)
        }
        #expect(probes == ["head", "middle", "tail"])
        let byName = Dictionary(uniqueKeysWithValues: report.entries.map { ($0.name, $0) })
        #expect(byName["a-big.bin"]?.size == Int(bigLength))
        #expect((byName["b-after.txt"]?.offset ?? 0) > 0xFFFF_FFFF)
        #expect(report.extracted["b-after.txt"] == "after the big one")
        #expect(report.hasZip64End, "the central directory starts beyond 4 GiB")
    }

    @Test("ZIP64 extra fields and end records are valid, checked with lowered limits",
          arguments: [ZipLimits(field32: 40, entryCount: 3), ZipLimits(field32: 1, entryCount: 1)])
    func zip64WithLoweredLimits(limits: ZipLimits) throws {
        let scratch = try Scratch()
        let folder = try scratch.directory("small")
        for name in ["one.txt", "two.txt", "sub/three.txt", "sub/four.txt"] {
            _ = scratch.file("small/" + name, contents: String(repeating: name, count: 20))
        }
        let snapshot = try UploadSnapshot.make(of: folder, isDirectory: true, in: scratch.url, limits: limits)
        let report = try ZipReport(snapshot, extracting: ["sub/three.txt"])
        #expect(report.bad == nil)
        #expect(report.entries.map(\.name) == ["one.txt", "sub/", "sub/four.txt", "sub/three.txt", "two.txt"])
        #expect(report.extracted["sub/three.txt"] == String(repeating: "sub/three.txt", count: 20))
        #expect(report.hasZip64End)
    }

    @Test("empty folders, symbolic links, names that are not UTF-8; FIFOs are left out")
    func specialEntries() throws {
        let scratch = try Scratch()
        let folder = try scratch.directory("mixed")
        _ = try scratch.directory("mixed/empty")
        _ = scratch.file("mixed/é.txt", contents: "accent")
        _ = scratch.file("outside.txt", contents: "must not be followed")
        try #require(symlink("../outside.txt", folder.path + "/link") == 0)
        try #require(mkfifo(folder.path + "/pipe", 0o644) == 0)
        let latin1Name: [UInt8] = Array("caf".utf8) + [0xE9] + Array(".txt".utf8)  // "café" in Latin-1
        let latin1Path = (Array((folder.path + "/").utf8) + latin1Name + [0]).map { CChar(bitPattern: $0) }
        let fd = open(latin1Path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        try #require(fd >= 0)
        _ = write(fd, "latin", 5)
        close(fd)

        let report = try Coordinator().coordinate(readingItemAt: folder, options: .forUploading) { snapshot in
            try ZipReport(snapshot, extracting: ["link"])
        }
        #expect(report.bad == nil)
        let byBytes = Dictionary(uniqueKeysWithValues: report.entries.map { ($0.nameBytes, $0) })
        #expect(byBytes.count == 4, "empty/, link, é.txt and the Latin-1 name; no FIFO")
        let empty = byBytes[Array("empty/".utf8)]
        #expect(empty.map { $0.mode & UInt32(S_IFMT) } == UInt32(S_IFDIR))
        let link = byBytes[Array("link".utf8)]
        #expect(link.map { $0.mode & UInt32(S_IFMT) } == UInt32(S_IFLNK))
        #expect(report.extracted["link"] == "../outside.txt", "a link is stored as its target, not followed")
        #expect(byBytes[Array("é.txt".utf8)]?.utf8 == true)
        #expect(byBytes[latin1Name]?.utf8 == false, "the UTF-8 flag only for valid UTF-8 names")
        #expect(byBytes[latin1Name]?.size == 5)
    }

    @Test("an empty folder gives an empty, valid archive")
    func emptyFolder() throws {
        let scratch = try Scratch()
        let folder = try scratch.directory("nothing")
        let report = try Coordinator().coordinate(readingItemAt: folder, options: .forUploading) { try ZipReport($0) }
        #expect(report.bad == nil)
        #expect(report.entries.isEmpty)
    }

    @Test("a sparse file's copy has the same length and bytes")
    func sparseFileCopy() throws {
        let scratch = try Scratch()
        let url = scratch.url.appendingPathComponent("sparse.bin")
        let fd = open(url.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o640)
        try #require(fd >= 0)
        try #require(ftruncate(fd, 3 << 20) == 0)
        _ = pwrite(fd, "data", 4, 1 << 20)
        close(fd)
        let (same, mode) = try Coordinator().coordinate(readingItemAt: url, options: .forUploading) { copy in
            var info = stat()
            _ = stat(copy.path, &info)
            return (try Data(contentsOf: copy) == Data(contentsOf: url), info.st_mode & 0o777)
        }
        #expect(same)
        #expect(mode == 0o640)
    }

    @Test("archiving a 200 MiB file keeps the peak memory small (measured in a child process)")
    func boundedMemory() throws {
        let scratch = try Scratch()
        let folder = try scratch.directory("large")
        let fd = open(folder.path + "/data.bin", O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        try #require(fd >= 0)
        var block = [UInt8](repeating: 0, count: 1 << 20)
        for index in block.indices { block[index] = UInt8(truncatingIfNeeded: index &* 31 &+ index >> 9) }
        for _ in 0..<200 { try #require(write(fd, block, block.count) == block.count) }
        close(fd)

        let child = try ChildProcess(["upload", folder.path])
        let line = child.expect("SNAPSHOT")
        child.waitForExit()
        let fields = (line ?? "").split(separator: " ")
        try #require(fields.count == 4 && fields[0] == "SNAPSHOT", "child said: \(line ?? "nothing")")
        #expect(Int(fields[1]) ?? 0 > 200 << 20)
        let growthKB = Int(fields[3]) ?? .max
        #expect(growthKB < 32 * 1024, "peak memory grew by \(growthKB) kB while archiving 200 MiB")
        #expect(ZipArchiveWriter.chunkSize <= 1 << 20)
    }

    @Test("a full disk gives ioFailed with the errno, and leaves no temporary files",
          .enabled(if: SmallTmpfs.isAvailable, Comment(rawValue: SmallTmpfs.unavailableMessage)))
    func fullDiskIsTyped() throws {
        let scratch = try Scratch()
        let folder = try scratch.directory("payload")
        _ = scratch.file("payload/a.txt", contents: String(repeating: "x", count: 256 * 1024))
        let file = scratch.file("payload/a.txt")
        try SmallTmpfs.withMount(size: "64k", inside: scratch.url) { small in
            for (item, isDirectory) in [(folder, true), (file, false)] {
                do throws(CoordinationError) {
                    _ = try UploadSnapshot.make(of: item, isDirectory: isDirectory, in: small)
                    Issue.record("a 256 KiB snapshot fitted in a 64 KiB tmpfs")
                } catch {
                    guard case .ioFailed(let path, let code) = error else {
                        Issue.record("expected ioFailed, got \(error)")
                        continue
                    }
                    #expect(code == .noSpace)
                    #expect(path.hasPrefix(small.path), "the failing path is the snapshot's: \(path)")
                }
                #expect(try FileManager.default.contentsOfDirectory(atPath: small.path).isEmpty,
                        "nothing is left behind")
            }
            // Through the public API, in a process whose temporary directory is the full tmpfs.
            // Not under ThreadSanitizer: its runtime dies of SIGBUS (in its `memcpy` interceptor,
            // while Swift demangles a type name) when TMPDIR is a full tmpfs, before our code runs.
            if dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_init") != nil {
                print("skipping the child-process half: ThreadSanitizer cannot run with TMPDIR on a full tmpfs")
                return
            }
            let output = try runHelper(["upload", folder.path], environment: ["TMPDIR": small.path])
            #expect(output.contains("Could not read or write"), "got: \(output)")
            #expect(output.contains("errno \(ENOSPC)"), "got: \(output)")
            let left = try FileManager.default.contentsOfDirectory(atPath: small.path)
            #expect(!left.contains { $0.hasPrefix("clouddocuments-upload-") }, "left behind: \(left)")
        }
    }

    @Test("an item that does not exist gives ioFailed(ENOENT), not invalidRequest")
    func missingItemIsTyped() throws {
        let scratch = try Scratch()
        let missing = scratch.url.appendingPathComponent("gone")
        do throws(CoordinationError) {
            _ = try UploadSnapshot.make(of: missing, isDirectory: false, in: scratch.url)
            Issue.record("a snapshot of nothing was made")
        } catch {
            guard case .ioFailed(let path, let code) = error else {
                Issue.record("expected ioFailed, got \(error)")
                return
            }
            #expect(code == .noSuchFileOrDirectory)
            #expect(path == missing.path)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.url.path).isEmpty)
    }

    @Test("CRC-32: the check value")
    func crc32() {
        var check = CRC32()
        check.update(Array("123456789".utf8))
        #expect(check.value == 0xCBF4_3926)
    }

    @Test("CRC-32: two slices give the bytewise value, wherever the split", arguments: [0, 1, 7, 8, 9, 500, 999, 1000])
    func crc32Slices(split: Int) {
        var bytes = [UInt8](repeating: 0, count: 1000)
        for index in bytes.indices { bytes[index] = UInt8(truncatingIfNeeded: index &* 7919 >> 3) }
        var sliced = CRC32()
        sliced.update(Array(bytes[..<split]))
        sliced.update(Array(bytes[split...]))
        #expect(sliced.value == Self.bytewiseCRC(bytes))
    }

    @Test("CRC-32: a run of zeros by arithmetic gives the bytewise value", arguments: [1, 2, 3, 8, 1000, 65_537])
    func crc32Zeros(count zeros: Int) {
        var arithmetic = CRC32()
        arithmetic.update(Array("prefix".utf8))
        arithmetic.updateWithZeros(count: UInt64(zeros))
        #expect(arithmetic.value == Self.bytewiseCRC(Array("prefix".utf8) + [UInt8](repeating: 0, count: zeros)))
    }

    /// Bytes of a stored member, read straight from the archive after its local header.
    private static func memberBytes(in archive: URL, headerOffset: Int, at ranges: [(Int, Int)]) throws -> [String] {
        let handle = try FileHandle(forReadingFrom: archive)
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(headerOffset))
        let header = try #require(try handle.read(upToCount: 30))
        #expect(header.prefix(4) == Data([0x50, 0x4B, 0x03, 0x04]), "a local header where the directory says")
        let nameLength = Int(header[26]) | Int(header[27]) << 8, extraLength = Int(header[28]) | Int(header[29]) << 8
        let dataStart = headerOffset + 30 + nameLength + extraLength
        return try ranges.map { offset, count in
            try handle.seek(toOffset: UInt64(dataStart + offset))
            return String(decoding: try handle.read(upToCount: count) ?? Data(), as: UTF8.self)
        }
    }

    private static func bytewiseCRC(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
        }
        return crc ^ 0xFFFF_FFFF
    }
}

/// What Python's `zipfile` makes of an archive: `testzip()` (every CRC checked), each member,
/// whether the ZIP64 end of central directory locator is there, and some members' text.
struct ZipReport {
    struct Entry: Decodable {
        let nameHex: String
        let size: Int
        let mode: UInt32
        let utf8: Bool
        let offset: Int
        var nameBytes: [UInt8] {
            var bytes: [UInt8] = []
            var index = nameHex.startIndex
            while index < nameHex.endIndex {
                let next = nameHex.index(index, offsetBy: 2)
                bytes.append(UInt8(nameHex[index..<next], radix: 16) ?? 0)
                index = next
            }
            return bytes
        }
        var name: String { String(decoding: nameBytes, as: UTF8.self) }
    }
    private struct Output: Decodable {
        let bad: String?
        let entries: [Entry]
        let zip64End: Bool
        let extracted: [String: String]
    }

    let bad: String?
    let entries: [Entry]
    let hasZip64End: Bool
    let extracted: [String: String]

    private static let script = """
        import json, sys, zipfile
        archive = zipfile.ZipFile(sys.argv[1])
        entries = []
        for info in archive.infolist():
            utf8 = bool(info.flag_bits & 0x800)
            raw = info.filename.encode('utf-8' if utf8 else 'cp437')
            entries.append({'nameHex': raw.hex(), 'size': info.file_size, 'mode': info.external_attr >> 16,
                            'utf8': utf8, 'offset': info.header_offset})
        extracted = {name: archive.read(name).decode('utf-8') for name in sys.argv[3:]}
        with open(sys.argv[1], 'rb') as raw:
            size = raw.seek(0, 2)
            raw.seek(max(size - 42, 0))
            zip64End = size >= 42 and raw.read(4) == b'PK\\x06\\x07'
        bad = archive.testzip() if sys.argv[2] == 'test' else None
        print(json.dumps({'bad': bad, 'entries': entries, 'zip64End': zip64End,
                          'extracted': extracted}))
        """

    /// `testingEveryCRC: false` skips `testzip()` (which reads every byte: seconds per GiB).
    init(_ archive: URL, extracting names: [String] = [], testingEveryCRC: Bool = true) throws {
        let output = try runProcess("/usr/bin/env", ["python3", "-c", Self.script, archive.path,
                                                     testingEveryCRC ? "test" : "skip"] + names)
        guard output.status == 0, let data = output.stdout.data(using: .utf8) else {
            throw ZipReportError(message: """
                python3's zipfile could not read \(archive.path) (exit \(output.status)): \(output.stderr) \
                (these tests need python3 on the PATH; exit 127 means it is missing)
                """)
        }
        let decoded = try JSONDecoder().decode(Output.self, from: data)
        bad = decoded.bad
        entries = decoded.entries
        hasZip64End = decoded.zip64End
        extracted = decoded.extracted
    }
}

struct ZipReportError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// Runs a program to its end; stdout and stderr go to files, so no pipe can fill up.
func runProcess(_ path: String, _ arguments: [String], environment: [String: String] = [:])
    throws -> (status: Int32, stdout: String, stderr: String) {
    let scratch = try Scratch()
    let outURL = scratch.url.appendingPathComponent("stdout"), errURL = scratch.url.appendingPathComponent("stderr")
    _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
    _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    process.standardOutput = try FileHandle(forWritingTo: outURL)
    process.standardError = try FileHandle(forWritingTo: errURL)
    process.standardInput = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    return (process.terminationStatus, try String(contentsOf: outURL, encoding: .utf8),
            (try? String(contentsOf: errURL, encoding: .utf8)) ?? "")
}

/// Runs the test helper with extra environment variables; returns what it printed.
func runHelper(_ arguments: [String], environment: [String: String]) throws -> String {
    try runProcess(ChildProcess.helperURL.path, arguments, environment: environment).stdout
}

