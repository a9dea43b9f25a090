import Foundation
import Glibc
import SystemSupport
import Testing

@Suite("SystemSupport: errno values, byte paths, file identity, read-to-end")
struct SystemSupportTests {
    @Test("Errno describes itself with strerror_r, the same from many threads at once")
    func errnoDescription() async {
        #expect(Errno(rawValue: ENOENT).description == "No such file or directory, errno 2")
        #expect(Errno(rawValue: ENOSPC).message == "No space left on device")
        await withTaskGroup(of: Bool.self) { group in
            for index in 0..<64 {
                let code: Int32 = index.isMultiple(of: 2) ? EACCES : EEXIST
                group.addTask {
                    let expected = code == EACCES ? "Permission denied" : "File exists"
                    return (0..<200).allSatisfy { _ in Errno(rawValue: code).message == expected }
                }
            }
            for await same in group { #expect(same) }
        }
    }

    @Test("valueOrErrno returns the value or the errno, and repeats the call on EINTR only")
    func retrying() throws {
        var calls = 0
        let result = valueOrErrno { () -> Int32 in
            calls += 1
            if calls < 3 { errno = EINTR; return -1 }
            return 7
        }
        #expect(calls == 3)
        #expect(try result.get() == 7)
        let failure = valueOrErrno { () -> Int32 in errno = EBADF; return -1 }
        #expect(throws: Errno(rawValue: EBADF)) { try failure.get() }
        var tries = 0
        let interrupted = valueOrErrno(retryOnInterrupt: false) { () -> Int32 in tries += 1; errno = EINTR; return -1 }
        #expect(tries == 1)
        #expect(throws: Errno.interrupted) { try interrupted.get() }
        var attempts = 0
        let last = valueOrErrno { () -> Int in
            attempts += 1
            errno = attempts < 4 ? EINTR : EAGAIN
            return -1
        }
        #expect(attempts == 4)
        #expect(throws: Errno.resourceTemporarilyUnavailable) { try last.get() }
    }

    @Test("lossless path strings keep every byte; valid UTF-8 is unchanged")
    func losslessPaths() {
        #expect(PathBytes.string(fromBytes: Array("/a/é b%.txt".utf8)) == "/a/é b%.txt")
        let samples: [[UInt8]] = [
            [0xFF], [0x61, 0xFF, 0x62], [0xC3], [0xC3, 0x28], [0xE2, 0x82], [0xED, 0xA0, 0x80],  // surrogate
            [0xF0, 0x9F, 0x98, 0x80, 0x80], [0xC0, 0xAF], [0x80, 0xBF, 0xFE], [0xC3, 0xA9, 0xFF],
        ]
        var generator = SystemRandomNumberGenerator()
        let random = (0..<200).map { _ in
            (0..<Int.random(in: 1...40, using: &generator)).map { _ in UInt8.random(in: 1...255, using: &generator) }
        }
        for bytes in samples + random {
            let path = PathBytes.string(fromBytes: bytes)
            #expect(PathBytes.bytes(of: path) == bytes, "round trip of \(bytes)")
            let withSlashes = [0x2F] + bytes.filter { $0 != 0x2F } + [0x2F, 0x78]
            let split = PathBytes.string(fromBytes: withSlashes).utf8.split(separator: 0x2F).count
            #expect(split == withSlashes.split(separator: 0x2F).count, "a '/' is never inside an escape")
        }
        #expect(PathBytes.display(PathBytes.string(fromBytes: [0x61, 0xFF])) == "a\u{FFFD}")
    }

    @Test("file URLs carry the bytes both ways")
    func fileURLs() {
        let bytes: [UInt8] = Array("/tmp/d%ir/".utf8) + [0xFF, 0x20, 0x23, 0x3F] + Array("x.txt".utf8)
        let path = PathBytes.string(fromBytes: bytes)
        let url = PathBytes.fileURL(path)
        #expect(url.isFileURL)
        #expect(PathBytes.bytes(of: PathBytes.path(of: url)) == bytes)
        #expect(PathBytes.path(of: rawNameURL(in: URL(fileURLWithPath: "/tmp"), [0x61, 0xFF])) == PathBytes.string(fromBytes: Array("/tmp/a".utf8) + [0xFF]))
        let plain = URL(fileURLWithPath: "/tmp/100% done.txt")
        #expect(PathBytes.path(of: plain) == "/tmp/100% done.txt")
        #expect(PathBytes.fileURL("/tmp/100% done.txt") == plain)
        let relative = URL(fileURLWithPath: "rel/x", relativeTo: URL(fileURLWithPath: "/base/", isDirectory: true))
        #expect(PathBytes.path(of: relative) == "/base/rel/x")
    }

    @Test("realPath resolves links before '..', and reports errno")
    func realPath() throws {
        let scratch = try Scratch()
        let sub = try scratch.directory("real/sub")
        let link = scratch.url.appendingPathComponent("lnk")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: sub)
        let real = try PathBytes.realPath(scratch.url.path).get()
        #expect(try PathBytes.realPath(link.path + "/..").get() == real + "/real")
        #expect(throws: Errno.noSuchFileOrDirectory) { try PathBytes.realPath(scratch.url.path + "/missing").get() }
    }

    @Test("FileIdentity tells versions apart and can look at a link itself")
    func fileIdentity() throws {
        let scratch = try Scratch()
        let file = scratch.file("f.txt", contents: "one")
        let first = try #require(FileIdentity.of(file))
        #expect(FileIdentity.of(file) == first)
        try "two!".write(to: file, atomically: true, encoding: .utf8)
        let second = try #require(FileIdentity.of(file))
        #expect(second != first)
        #expect(second.size == 4)
        let link = scratch.url.appendingPathComponent("l")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: file)
        #expect(FileIdentity.of(link.path, followingLinks: true) == second)
        #expect(FileIdentity.of(link.path, followingLinks: false) != second)
        #expect(FileIdentity.of(scratch.url.path + "/none", followingLinks: false) == nil)
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        let date = try #require(attributes[.modificationDate] as? Date)
        #expect(abs(second.modificationDate.timeIntervalSince(date)) < 0.001)
    }

    @Test("readToEnd reads past a wrong size hint and reports progress")
    func readsToTheEnd() throws {
        let scratch = try Scratch()
        let file = scratch.file("big.bin")
        let bytes = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try bytes.write(to: file)
        for hint in [0, 10, 300_000, 1_000_000] {
            let fd = open(file.path, O_RDONLY | O_CLOEXEC)
            defer { close(fd) }
            var reports: [Int] = []
            let data = try readToEnd(fd, sizeHint: hint, chunkSize: 65_536) { reports.append($0) }
            #expect(data == bytes)
            #expect(reports.last == bytes.count)
        }
        #expect(throws: Errno(rawValue: EBADF)) { try readToEnd(-1, sizeHint: 0) }
    }

    @Test("SystemPath: bytes kept from bytes, URLs and lossless strings; equal and hashed by bytes")
    func systemPaths() throws {
        let bytes: [UInt8] = Array("/tmp/d".utf8) + [0xFF, 0x20] + Array("x.txt".utf8)
        let path = SystemPath(bytes: bytes)
        #expect(path.bytes == bytes)
        #expect(path == SystemPath(lossless: PathBytes.string(fromBytes: bytes)))
        #expect(SystemPath(fileURL: path.fileURL()) == path)
        #expect(path.display == "/tmp/d\u{FFFD} x.txt")
        #expect("\(path)" == path.display)
        path.withCString { cPath in
            #expect(Array(UnsafeRawBufferPointer(start: cPath, count: strlen(cPath))) == bytes)
        }
        // A composed and a decomposed "é" are equal strings, but two file names.
        let composed = SystemPath(lossless: "/d/\u{E9}"), decomposed = SystemPath(lossless: "/d/e\u{301}")
        #expect("/d/\u{E9}" == "/d/e\u{301}")
        #expect(composed != decomposed)
        #expect(Set([composed, decomposed, SystemPath(lossless: "/d/\u{E9}")]).count == 2)
        #expect(SystemPath(lossless: "/").appending("a") == SystemPath(lossless: "/a"))
        #expect(SystemPath(lossless: "/d").appending("a") == SystemPath(lossless: "/d/a"))
    }

    @Test("POSIX through SystemPath: a name that is not UTF-8 is created, found, renamed and removed")
    func posixWithSystemPaths() throws {
        let scratch = try Scratch()
        let folder = SystemPath(fileURL: scratch.url)
        let odd = folder.appending(PathBytes.string(fromBytes: [0x61, 0xFF]))
        let file = try POSIX.open(odd, O_CREAT | O_EXCL | O_WRONLY, mode: 0o600)
        #expect(file.path == odd.lossless)
        try Array("hi".utf8).withUnsafeBytes { try file.writeAll($0) }
        try file.close()
        #expect(try POSIX.linkStatus(odd)?.st_size == 2)
        #expect(try POSIX.directoryEntries(folder).invalid.count == 1)
        let renamed = folder.appending(PathBytes.string(fromBytes: [0x62, 0xFE]))
        try POSIX.rename(odd, to: renamed)
        #expect(try POSIX.status(odd) == nil)
        #expect(POSIX.resolvedPath(renamed).map { Array($0.bytes.suffix(2)) } == [0x62, 0xFE])
        #expect(throws: SystemCallError.self) { try POSIX.open(odd, O_RDONLY) }
        #expect(POSIX.removeTree(renamed) == nil)
        #expect(try POSIX.linkStatus(renamed) == nil)
    }
}
