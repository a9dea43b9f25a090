import Foundation
import Glibc

/// Opens `path` read-only without blocking and without following a final symbolic link
/// (`O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC`) and returns the descriptor when it names a
/// regular file; `nil` (nothing left open) when it is missing, a link, a FIFO, a device, a folder or
/// cannot be opened. Opening a FIFO this way returns at once, so a FIFO planted where a small
/// file was expected can never block the caller. Any thread.
package func openRegularFileForReading(_ path: String) -> Int32? {
    let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)
    guard descriptor >= 0 else { return nil }
    var info = stat()
    guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
        close(descriptor)
        return nil
    }
    return descriptor
}

/// The contents of the regular file at `path` when it holds at most `limit` bytes; `nil` when it is
/// missing, not a regular file (see ``openRegularFileForReading(_:)``), unreadable, or longer
/// (at most `limit + 1` bytes are ever read, so a file growing meanwhile cannot make it read
/// without end). Never blocks on a FIFO or device. Any thread.
package func readSmallRegularFile(atPath path: String, limit: Int) -> Data? {
    guard limit >= 0, let descriptor = openRegularFileForReading(path) else { return nil }
    defer { close(descriptor) }
    let capacity = limit + 1
    var buffer = Data(count: capacity)
    var total = 0
    while total < capacity {
        let count = buffer.withUnsafeMutableBytes { bytes -> Int in
            guard let base = bytes.baseAddress else { return 0 }
            return Glibc.read(descriptor, base + total, capacity - total)
        }
        if count < 0 {
            if errno == EINTR { continue }
            return nil
        }
        if count == 0 { break }
        total += count
    }
    guard total <= limit else { return nil }
    buffer.count = total
    return buffer
}
