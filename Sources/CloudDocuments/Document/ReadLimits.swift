import Glibc

/// How large a file a document read accepts. Files are read whole into memory, and Foundation
/// traps when it cannot allocate a buffer: a sparse file claiming a size of a terabyte (made with
/// `truncate -s 1T`) would crash the reader instead of failing. Reads check the size first and
/// throw a ``DocumentError`` beyond the limit. Internal; any thread.
enum ReadLimits {
    /// The largest file read into memory: the machine's physical memory (no read can hold more).
    /// Computed once.
    static let maximumFileBytes: Int = {
        let pages = sysconf(Int32(_SC_PHYS_PAGES)), pageSize = sysconf(Int32(_SC_PAGESIZE))
        guard pages > 0, pageSize > 0 else { return Int.max / 2 }
        let (bytes, overflow) = pages.multipliedReportingOverflow(by: pageSize)
        return overflow ? Int.max / 2 : min(bytes, Int.max / 2)
    }()

    /// The reason a file of `size` bytes is refused, or `nil` when it may be read.
    static func refusal(forSize size: Int64) -> String? {
        guard size > Int64(maximumFileBytes) else { return nil }
        return "it is \(size) bytes long, more than this machine's memory (\(maximumFileBytes) bytes)"
    }
}
