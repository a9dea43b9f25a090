import Foundation
import Glibc

/// The lock directory the workers use, as the library finds it (Sources/FileCoordination/LockFiles/
/// LockDirectory.swift): `$CLOUDDOCUMENTS_LOCK_DIR` when set, else `/run/user/<uid>/clouddocuments`
/// when `/run/user/<uid>` is a real folder of ours, else `/tmp/clouddocuments-<uid>`. The library
/// keeps that type internal, so the rule is repeated here; the soak normally sets the variable to
/// a private folder of the run, so the count is of this run's lock files alone.
struct LockDirectoryInfo: Sendable {
    let path: String

    static let environmentVariable = "CLOUDDOCUMENTS_LOCK_DIR"

    /// Where the library will put its lock files, given the current environment.
    static func current() -> LockDirectoryInfo {
        if let explicit = ProcessInfo.processInfo.environment[environmentVariable], !explicit.isEmpty {
            return LockDirectoryInfo(path: explicit)
        }
        let uid = geteuid()
        var info = stat()
        let runtime = "/run/user/\(uid)"
        if lstat(runtime, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, info.st_uid == uid {
            return LockDirectoryInfo(path: runtime + "/clouddocuments")
        }
        return LockDirectoryInfo(path: "/tmp/clouddocuments-\(uid)")
    }

    /// Every entry below the directory that is not a folder (lock files, the presence table,
    /// sockets), with the kernel's name for it in /proc/locks (`MAJOR:MINOR:INODE`, hexadecimal
    /// device numbers), and the number of folders.
    func entries() -> (files: [String: String], folders: Int) {
        var files: [String: String] = [:]
        var folders = 0
        var pending = [path]
        while let folder = pending.popLast(), files.count < 1_000_000 {
            guard let directory = opendir(folder) else { continue }
            defer { closedir(directory) }
            while let entry = readdir(directory) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                if name == "." || name == ".." { continue }
                let child = folder + "/" + name
                var info = stat()
                guard lstat(child, &info) == 0 else { continue }
                if info.st_mode & S_IFMT == S_IFDIR {
                    folders += 1
                    pending.append(child)
                } else {
                    files[Self.kernelName(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))] = String(child.dropFirst(path.count + 1))
                }
            }
        }
        return (files, folders)
    }

    /// How many files (not folders) the directory holds now.
    func fileCount() -> Int { entries().files.count }

    /// The lines of /proc/locks on files of the lock directory, each with the file's path in it.
    func kernelLocks() -> [String] {
        let files = entries().files
        guard let data = FileManager.default.contents(atPath: "/proc/locks") else { return ["(cannot read /proc/locks)"] }
        var lines: [String] = []
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            // "1: OFDLCK ADVISORY WRITE -1 fd:01:1234 0 EOF" (a blocked waiter: "1: -> OFDLCK …")
            for field in line.split(separator: " ") where field.split(separator: ":").count == 3 {
                if let path = files[String(field)] {
                    lines.append("\(line)  \(path)")
                    break
                }
            }
        }
        return lines
    }

    /// `MAJOR:MINOR:INODE` as /proc/locks prints it (`%02x:%02x:%lu`), from a `stat` device number.
    static func kernelName(device: UInt64, inode: UInt64) -> String {
        let major = ((device >> 8) & 0xfff) | ((device >> 32) & ~UInt64(0xfff))
        let minor = (device & 0xff) | ((device >> 12) & ~UInt64(0xff))
        return String(format: "%02llx:%02llx:%llu", major, minor, inode)
    }
}
