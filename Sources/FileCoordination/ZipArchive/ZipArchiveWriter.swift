import Glibc

/// Streams a ZIP archive of stored (uncompressed) members into a file, in bounded memory.
///
/// File data is copied in chunks of ``chunkSize`` while its CRC-32 is computed; the member's local
/// header is first written as a placeholder of the right size and filled in once the CRC and
/// length are known (so no data descriptor is needed). Holes of sparse files are checksummed
/// arithmetically and left as holes in the archive. Central directory records go to a spill file
/// once they pass ``chunkSize``, so memory does not grow with the number of members either.
/// ZIP64 records are written for whatever exceeds the limits in ``ZipLimits``.
final class ZipArchiveWriter {
    /// The largest block held in memory: file data is read this much at a time, and written
    /// bytes and central directory records are buffered up to this much.
    static let chunkSize = 1 << 20

    private let archive: SnapshotFile
    private let limits: ZipLimits
    /// Bytes that belong at `pendingOffset` in the archive and are not written yet.
    private var pending: [UInt8] = []
    private var pendingOffset: UInt64 = 0
    private let chunk: UnsafeMutableRawBufferPointer
    private var central: CentralDirectorySpill
    private var memberCount: UInt64 = 0

    /// Where the next byte goes.
    private var offset: UInt64 { pendingOffset + UInt64(pending.count) }

    /// `archive` must be empty and open for writing; the central directory spill file is made
    /// (and unlinked at once) in the folder `scratchFolder`.
    init(archive: SnapshotFile, scratchFolder: String, limits: ZipLimits = .standard) {
        self.archive = archive
        self.limits = limits
        chunk = .allocate(byteCount: Self.chunkSize, alignment: 16)
        central = CentralDirectorySpill(folder: scratchFolder)
        pending.reserveCapacity(Self.chunkSize)
    }

    deinit { chunk.deallocate() }

    func addDirectory(name: [UInt8], mode: UInt32, modified: Int) throws(CoordinationError) {
        try addSmallMember(ZipMember(name: name, mode: mode, modified: modified), contents: [])
    }

    /// A symbolic link is stored as Info-ZIP does: its target's bytes are the member's contents
    /// and its mode says `S_IFLNK`, so `unzip` recreates the link (other tools make a small file
    /// holding the target path). The link is never followed.
    func addSymbolicLink(name: [UInt8], target: [UInt8], modified: Int) throws(CoordinationError) {
        let member = ZipMember(name: name, mode: UInt32(S_IFLNK) | 0o777, modified: modified)
        try addSmallMember(member, contents: target)
    }

    /// Copies the first `length` bytes of `source` (its size when opened; fewer if it shrinks
    /// meanwhile, never more).
    func addFile(name: [UInt8], source: SnapshotFile, length: UInt64, mode: UInt32,
                 modified: Int) throws(CoordinationError) {
        var member = ZipMember(name: name, mode: mode, modified: modified)
        member.sizesInZip64 = length >= limits.field32
        member.headerOffset = offset
        try append(zeros: ZipRecords.localHeaderSize(member))
        var crc = CRC32()
        member.size = try SparseFileReader.stream(source, length: length, buffer: chunk,
            data: { bytes throws(CoordinationError) in
                crc.update(bytes)
                try append(bytes)
            },
            hole: { count throws(CoordinationError) in
                crc.updateWithZeros(count: count)
                try skip(count)
            })
        member.crc = crc.value
        try overwrite(ZipRecords.localHeader(member), at: member.headerOffset)
        try finishMember(member)
    }

    /// Writes the central directory and the end records. The archive is complete afterwards.
    func finish() throws(CoordinationError) {
        let centralOffset = offset
        try central.replay { bytes throws(CoordinationError) in try append(bytes) }
        let endOffset = offset
        let end = ZipRecords.end(entryCount: memberCount, centralSize: endOffset - centralOffset,
                                 centralOffset: centralOffset, endOffset: endOffset, limits: limits)
        try end.withRawBytes { bytes throws(CoordinationError) in try append(bytes) }
        try flush()
    }

    // MARK: Members

    private func addSmallMember(_ member: ZipMember, contents: [UInt8]) throws(CoordinationError) {
        var member = member
        var crc = CRC32()
        crc.update(contents)
        member.crc = crc.value
        member.size = UInt64(contents.count)
        member.headerOffset = offset
        try ZipRecords.localHeader(member).withRawBytes { bytes throws(CoordinationError) in try append(bytes) }
        try contents.withRawBytes { bytes throws(CoordinationError) in try append(bytes) }
        try finishMember(member)
    }

    private func finishMember(_ member: ZipMember) throws(CoordinationError) {
        try central.append(ZipRecords.centralHeader(member, limits: limits))
        memberCount += 1
    }

    // MARK: Output

    private func append(_ bytes: UnsafeRawBufferPointer) throws(CoordinationError) {
        if pending.count + bytes.count > Self.chunkSize { try flush() }
        if bytes.count >= Self.chunkSize {
            try archive.write(bytes, at: pendingOffset)
            pendingOffset += UInt64(bytes.count)
        } else {
            pending.append(contentsOf: bytes)
        }
    }

    private func append(zeros count: Int) throws(CoordinationError) {
        if pending.count + count > Self.chunkSize { try flush() }
        pending.append(contentsOf: repeatElement(0, count: count))
    }

    /// Leaves a hole of `count` zero bytes in the archive (the file system reads it as zeros).
    private func skip(_ count: UInt64) throws(CoordinationError) {
        try flush()
        pendingOffset += count
    }

    /// Replaces bytes already appended (a local header placeholder).
    private func overwrite(_ bytes: [UInt8], at position: UInt64) throws(CoordinationError) {
        var bytes = bytes[...], position = position
        if position < pendingOffset {
            let flushedCount = Int(min(UInt64(bytes.count), pendingOffset - position))
            try Array(bytes.prefix(flushedCount)).withRawBytes { raw throws(CoordinationError) in
                try archive.write(raw, at: position)
            }
            bytes = bytes.dropFirst(flushedCount)
            position += UInt64(flushedCount)
        }
        guard !bytes.isEmpty else { return }
        let start = Int(position - pendingOffset)
        pending.replaceSubrange(start..<start + bytes.count, with: bytes)
    }

    private func flush() throws(CoordinationError) {
        guard !pending.isEmpty else { return }
        try pending.withRawBytes { bytes throws(CoordinationError) in try archive.write(bytes, at: pendingOffset) }
        pendingOffset += UInt64(pending.count)
        pending.removeAll(keepingCapacity: true)
    }
}

/// The central directory while members are added: in memory up to
/// ``ZipArchiveWriter/chunkSize``, then in an unlinked file in the snapshot's private folder.
struct CentralDirectorySpill {
    private let folder: String
    private var buffer: [UInt8] = []
    private var spill: SnapshotFile?
    private var spilled: UInt64 = 0

    init(folder: String) { self.folder = folder }

    mutating func append(_ record: [UInt8]) throws(CoordinationError) {
        buffer.append(contentsOf: record)
        guard buffer.count >= ZipArchiveWriter.chunkSize else { return }
        let file: SnapshotFile
        if let spill { file = spill } else { file = try openSpill() }
        spill = file
        try buffer.withRawBytes { bytes throws(CoordinationError) in try file.write(bytes, at: spilled) }
        spilled += UInt64(buffer.count)
        buffer.removeAll(keepingCapacity: true)
    }

    /// Hands every record, in order, to `body` (in chunks).
    func replay(_ body: (UnsafeRawBufferPointer) throws(CoordinationError) -> Void) throws(CoordinationError) {
        if let spill {
            let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: ZipArchiveWriter.chunkSize, alignment: 16)
            defer { chunk.deallocate() }
            var position: UInt64 = 0
            while position < spilled {
                let read = try spill.read(into: chunk, at: position)
                if read == 0 { throw .ioFailed(path: spill.path, errno: .ioError) }
                try body(UnsafeRawBufferPointer(rebasing: chunk[0..<min(read, Int(spilled - position))]))
                position += UInt64(read)
            }
        }
        try buffer.withRawBytes { bytes throws(CoordinationError) in try body(bytes) }
    }

    private func openSpill() throws(CoordinationError) -> SnapshotFile {
        let path = folder + "/central-directory.part"
        let file = try SnapshotFile.open(Array(path.utf8), in: AT_FDCWD, flags: O_RDWR | O_CREAT | O_EXCL,
                                         mode: 0o600, displayPath: path)
        unlink(path)  // the open descriptor keeps it; nothing is left behind whatever happens next
        return file
    }
}
