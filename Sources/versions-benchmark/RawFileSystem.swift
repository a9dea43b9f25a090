import BenchmarkSupport
import CSystemShim
import Foundation
import Glibc

/// The raw system-call paths the library is compared with. No error handling beyond stopping:
/// the benchmark's own folder, nothing else touched.
enum RawFileSystem {
    /// One `opendir` + `readdir` to the end + `closedir` of `path`: the number of entries (no
    /// `stat` of anything).
    @discardableResult
    static func countEntries(_ path: String) -> Int {
        guard let directory = opendir(path) else { return -1 }
        defer { closedir(directory) }
        var count = 0
        while readdir(directory) != nil { count += 1 }
        return count
    }

    /// How the raw durable copy moves the bytes.
    enum CopyMethod: String {
        /// `copy_file_range(2)` in a loop (in-kernel copy, no user-space buffer).
        case copyFileRange = "copy_file_range"
        /// `read(2)` / `write(2)` with a 1 MiB buffer.
        case readWrite = "read/write 1 MiB"
    }

    /// The raw durable copy: open `source`; create `<folder>/.raw-<pid>` (`O_EXCL`, 0600); copy
    /// the bytes with `method`; `fsync`; close; rename to `<folder>/<name>`; `fsync` the folder.
    static func durableCopy(_ source: String, into folder: String, name: String, method: CopyMethod,
                            buffer: UnsafeMutableRawBufferPointer) -> Bool {
        let temporary = folder + "/.raw-\(getpid())"
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { return false }
        defer { close(input) }
        let output = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard output >= 0 else { return false }
        var ok = true
        switch method {
        case .copyFileRange:
            while true {
                let copied = copyFileRange(input, nil, output, nil, 1 << 30, 0)
                if copied == 0 { break }
                if copied < 0 { ok = false; break }
            }
        case .readWrite:
            outer: while true {
                let count = read(input, buffer.baseAddress, buffer.count)
                if count == 0 { break }
                if count < 0 { ok = false; break }
                var offset = 0
                while offset < count {
                    let written = write(output, buffer.baseAddress! + offset, count - offset)
                    if written <= 0 { ok = false; break outer }
                    offset += written
                }
            }
        }
        if fsync(output) != 0 { ok = false }
        close(output)
        if rename(temporary, folder + "/" + name) != 0 { ok = false }
        let directory = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory < 0 || fsync(directory) != 0 { ok = false }
        if directory >= 0 { close(directory) }
        return ok
    }

    /// The version store's durable steps done with plain system calls, for comparison: `mkdir`
    /// `<folder>/.rawv-<pid>` and its `data` folder; the contents copied (copy_file_range) into
    /// `data/<name>`; `fsync`; a 200-byte `version.json` created and `fsync`ed; `fsync` of `data`
    /// and of the folder; rename to `<folder>/<name>.version`; `fsync` of `<folder>`.
    static func durableVersionFolder(_ source: String, into folder: String, name: String) -> Bool {
        let temporary = folder + "/.rawv-\(getpid())"
        guard mkdir(temporary, 0o700) == 0, mkdir(temporary + "/data", 0o700) == 0 else { return false }
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { return false }
        defer { close(input) }
        let output = open(temporary + "/data/" + name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard output >= 0 else { return false }
        var ok = true
        while true {
            let copied = copyFileRange(input, nil, output, nil, 1 << 30, 0)
            if copied == 0 { break }
            if copied < 0 { ok = false; break }
        }
        if fsync(output) != 0 { ok = false }
        close(output)
        let metadata = [UInt8](repeating: 0x20, count: 200)
        let record = open(temporary + "/version.json", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if record < 0 || write(record, metadata, metadata.count) != metadata.count || fsync(record) != 0 { ok = false }
        if record >= 0 { close(record) }
        for path in [temporary + "/data", temporary] where !syncFolder(path) { ok = false }
        if rename(temporary, folder + "/" + name + ".version") != 0 { ok = false }
        return syncFolder(folder) && ok
    }

    static func syncFolder(_ path: String) -> Bool {
        let directory = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        defer { if directory >= 0 { close(directory) } }
        return directory >= 0 && fsync(directory) == 0
    }

    /// `copy_file_range(2)`, from CSystemShim (the Glibc module declares it only with `_GNU_SOURCE`).
    static func copyFileRange(_ input: Int32, _ inputOffset: UnsafeMutablePointer<Int64>?, _ output: Int32,
                              _ outputOffset: UnsafeMutablePointer<Int64>?, _ length: Int, _ flags: UInt32) -> Int {
        cshim_copy_file_range(input, inputOffset, output, outputOffset, length, flags)
    }

    /// Opens and reads `items/<id>/item.json` for every entry of `items` (plain system calls, no
    /// decoding): the number of records read.
    static func readEveryItemRecord(in items: String) -> Int {
        guard let directory = opendir(items) else { return -1 }
        defer { closedir(directory) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        var count = 0
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard !name.hasPrefix(".") else { continue }
            let fd = open(items + "/" + name + "/item.json", O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { continue }
            if read(fd, &buffer, buffer.count) > 0 { count += 1 }
            close(fd)
        }
        return count
    }
}
