import Foundation
import Glibc

/// The raw durable safe save the document save is compared with: temporary file in the same
/// folder (O_EXCL, 0600), write everything, fsync, rename over the target, fsync the folder.
enum RawSafeSave {
    static func save(_ bytes: [UInt8], to path: String) {
        let folder = (path as NSString).deletingLastPathComponent
        let temp = folder + "/.raw-save-\(getpid())"
        let fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written <= 0 { break }
                offset += written
            }
        }
        fsync(fd)
        close(fd)
        rename(temp, path)
        let directory = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        fsync(directory)
        close(directory)
    }
}
