import SystemSupport

// The system-call layer saving and reading use lives in SystemSupport (shared with
// FileCoordination and Ubiquity). These names keep it reachable in CloudDocuments without an
// import in every file, and for the tests through `@testable import CloudDocuments`. Internal.

/// A failed system call (SystemSupport's ``SystemSupport/SystemCallError``).
typealias SystemCallError = SystemSupport.SystemCallError

/// An open file descriptor and its path (SystemSupport's ``SystemSupport/FileDescriptor``).
typealias FileDescriptor = SystemSupport.FileDescriptor

/// The path-based POSIX calls (SystemSupport's ``SystemSupport/POSIX``).
typealias POSIX = SystemSupport.POSIX

/// A path as the kernel sees it, bytes (SystemSupport's ``SystemSupport/SystemPath``).
typealias SystemPath = SystemSupport.SystemPath
