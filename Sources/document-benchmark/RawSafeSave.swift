import BenchmarkSupport
import CSystemShim
import Foundation
import Glibc

/// The raw durable safe save the document save is compared with: temporary file in the same
/// folder (O_EXCL, 0600), write everything, fsync, rename over the target, fsync the folder.
///
/// Every call is checked: a failing raw save would look fast, so the benchmark stops instead
/// (``benchmarkFailed(_:)``). The checks are compare-and-branch beside system calls.
///
/// With `holdingReplaced`, the file about to be replaced is first held by an `O_PATH` descriptor,
/// returned for the caller to close after the save (the kernel then frees it at that `close`, not
/// inside the `rename`): what `SafeSave` does, for the reference row. Otherwise -1.
enum RawSafeSave {
    @discardableResult
    static func save(_ bytes: [UInt8], to path: String, holdingReplaced: Bool = false) -> Int32 {
        let folder = (path as NSString).deletingLastPathComponent
        let temp = folder + "/.raw-save-\(getpid())"
        let fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { benchmarkFailed("raw save: open \(temp): errno \(errno)") }
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { benchmarkFailed("raw save: write \(temp): errno \(errno)") }
                offset += written
            }
        }
        guard fsync(fd) == 0 else { benchmarkFailed("raw save: fsync \(temp): errno \(errno)") }
        guard close(fd) == 0 else { benchmarkFailed("raw save: close \(temp): errno \(errno)") }
        let held = holdingReplaced ? open(path, CSHIM_O_PATH | O_NOFOLLOW | O_CLOEXEC) : -1
        guard rename(temp, path) == 0 else { benchmarkFailed("raw save: rename to \(path): errno \(errno)") }
        let directory = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else { benchmarkFailed("raw save: open \(folder): errno \(errno)") }
        guard fsync(directory) == 0 else { benchmarkFailed("raw save: fsync \(folder): errno \(errno)") }
        close(directory)
        return held
    }
}
