import Foundation
import Glibc

/// A path as the kernel sees it — bytes — as a type the compiler checks, in the manner of
/// swift-system's `FilePath`. What the system edge (``POSIX``, the descriptors it opens) takes, so
/// a path cannot reach a system call without having been made from bytes, a file URL or a lossless
/// path string on purpose.
///
/// It stores the **lossless path string** (``PathBytes``): valid UTF-8 paths are their usual
/// string (no cost), and each byte that is not UTF-8 is escaped so that no byte is lost. Equality
/// and hashing are by bytes, not by Swift's canonical string equivalence: a composed and a
/// decomposed "é" are two different file names, so two different paths.
///
/// A value type; any thread.
package struct SystemPath: Hashable, Sendable, CustomStringConvertible {
    /// The path as a lossless path string (see ``PathBytes``): for keys, messages that must keep
    /// every byte, and the `String`-based helpers not yet moved to `SystemPath`.
    package let lossless: String

    /// The path a lossless path string stands for.
    package init(lossless: String) { self.lossless = lossless }

    /// The path of the bytes `bytes` (which contain no NUL).
    package init<Bytes: Collection>(bytes: Bytes) where Bytes.Element == UInt8 {
        self.lossless = PathBytes.string(fromBytes: bytes)
    }

    /// The path of a file URL, byte for byte (percent-encoded bytes included), made absolute
    /// against the working directory when it is relative (``PathBytes/path(of:)``).
    package init(fileURL: URL) { self.lossless = PathBytes.path(of: fileURL) }

    /// The exact bytes of the path.
    package var bytes: [UInt8] { PathBytes.bytes(of: lossless) }

    /// A file URL for the path (its bytes percent-encoded when they are not UTF-8).
    package func fileURL(isDirectory: Bool = false) -> URL { PathBytes.fileURL(lossless, isDirectory: isDirectory) }

    /// The text for messages: bytes that are not UTF-8 shown as U+FFFD.
    package var display: String { PathBytes.display(lossless) }

    /// Same as ``display``.
    package var description: String { display }

    /// Calls `body` with the path's exact bytes, NUL-terminated, valid only during the call. Read
    /// `errno` inside `body` (``valueOrErrno(retryOnInterrupt:_:)``), not after it returns.
    @inline(__always)
    package func withCString<R>(_ body: (UnsafePointer<CChar>) throws -> R) rethrows -> R {
        try PathBytes.withCString(lossless, body)
    }

    /// The path with `component` (a lossless name, without `/`) appended after a `/`.
    package func appending(_ component: String) -> SystemPath {
        SystemPath(lossless: lossless == "/" ? "/" + component : lossless + "/" + component)
    }

    /// The same bytes: the lossless forms of equal byte sequences are equal scalar for scalar, so
    /// comparing their UTF-8 compares the paths' bytes.
    package static func == (lhs: SystemPath, rhs: SystemPath) -> Bool {
        PathBytes.haveSameBytes(lhs.lossless, rhs.lossless)
    }

    /// Hashes the bytes (consistent with ``==(_:_:)``).
    package func hash(into hasher: inout Hasher) {
        var copy = lossless
        copy.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}
