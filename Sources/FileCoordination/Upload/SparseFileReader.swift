/// Reads the first `length` bytes of a file region by region: data in chunks no larger than the
/// buffer it is given, holes of sparse files as bare byte counts (never read, so a file with a
/// multi-gigabyte hole costs a few system calls).
enum SparseFileReader {
    /// Calls `data` for each chunk read and `hole` for each run of holes, in file order.
    /// Returns how many bytes were streamed: `length`, or fewer if the file shrank meanwhile.
    static func stream(_ source: SnapshotFile, length: UInt64, buffer: UnsafeMutableRawBufferPointer,
                       data: (UnsafeRawBufferPointer) throws(CoordinationError) -> Void,
                       hole: (UInt64) throws(CoordinationError) -> Void) throws(CoordinationError) -> UInt64 {
        var position: UInt64 = 0
        while position < length {
            guard let dataStart = try source.nextData(from: position), dataStart < length else {
                try hole(length - position)
                return length
            }
            if dataStart > position {
                try hole(dataStart - position)
                position = dataStart
            }
            let dataEnd = min(try source.nextHole(from: position, end: length), length)
            while position < dataEnd {
                let wanted = Int(min(UInt64(buffer.count), dataEnd - position))
                let read = try source.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<wanted]), at: position)
                if read == 0 { return position }  // the file shrank while it was read
                try data(UnsafeRawBufferPointer(rebasing: buffer[0..<read]))
                position += UInt64(read)
            }
        }
        return position
    }
}
