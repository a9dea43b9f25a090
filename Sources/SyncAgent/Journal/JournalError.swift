import FileCoordination
import Foundation

/// Why the journal could not be read or written. The engine stops syncing the container (the
/// journal is its memory of what was synced; guessing without it could delete), and says why.
public struct JournalError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was being done (`"open"`, `"append"`, `"compact"`, …).
    public var operation: String
    /// The file or folder concerned.
    public var path: String
    /// The system error.
    public var errno: Errno

    public init(operation: String, path: String, errno: Errno) {
        self.operation = operation
        self.path = path
        self.errno = errno
    }

    public var description: String { "sync journal: \(operation) \(path): \(errno.message)" }
}
