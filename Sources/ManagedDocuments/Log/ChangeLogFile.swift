import Foundation

/// One change log or baseline file: who wrote it, under which schema, what it covers, and the
/// record changes. Written once under a unique name, never rewritten (``LogFolder``).
///
/// The format (Docs/ManagedDocument.md, "The log format"), all integers little-endian:
///
/// ```
/// "ManagedDocuments change log\n" | "ManagedDocuments baseline\n"   a line for people (`head -1`)
/// "MDLOG" u8 format (2)
/// u8 kind (1 log, 2 baseline)  u32 schema version  str device  u64 sequence  u64 written (ms)
/// u32 n, n × (str device, u64 sequence)        coverage: every log of `device` up to `sequence`
///                                              was applied by the writer when it wrote this
/// u32 n, n × str                               names: entities, attributes, devices
/// u32 n, n × change: var entity name index, 16 bytes record id,
///                    u64 packed HLC, var device name index          the change's clock
///                    var m, m × (var (attribute name index << 1 | own clock), value
///                                [, u64 packed HLC, var device name index])
/// u32 CRC-32 of every byte before it, "END\n"
/// ```
/// `var` is an unsigned LEB128 varint (7 bits a byte, low first; most take one byte). A register
/// has the change's clock unless the low bit of its name field is set: then its own clock
/// follows its value (a baseline's record whose attributes were written at different times). A
/// value is a type tag (0 null, then ``AttributeType``'s raw values) and its payload: a string
/// or data as a varint byte count and the bytes, an integer as a zigzag varint, a double or date
/// as 8 bytes, a bool as 1, a UUID as 16. The header's strings are a u32 byte count and UTF-8.
///
/// Format 1 (before) had no change clock and fixed-size fields: `u32 entity, id, u16 m,
/// m × (u32 attribute, value, u64 packed HLC, u32 device)`, string and data lengths as u32 and
/// integers as 8 bytes; it is still read. A file whose format is later than ``currentFormat`` is
/// refused, as is one whose schema version is later than the program's (``ManagedStoreError``).
struct ChangeLogFile: Sendable, Equatable {
    enum Kind: UInt8, Sendable { case log = 1, baseline = 2 }

    static let currentFormat: UInt8 = 2
    static let magic = Array("MDLOG".utf8)
    static let trailer = Array("END\n".utf8)
    /// The largest file read (1 GiB): larger is damaged, refused before it is read.
    static let maximumSize = 1 << 30

    var kind: Kind
    var schemaVersion: Int
    var device: String
    var sequence: UInt64
    var writtenMilliseconds: UInt64
    /// Per device, the highest sequence up to which every log of that device was applied by the
    /// writer (``LogFolder`` uses it to compact; a baseline uses it to say what it contains).
    var coverage: [String: UInt64]
    var changes: [RecordChange]

    static func title(of kind: Kind) -> String {
        kind == .log ? "ManagedDocuments change log\n" : "ManagedDocuments baseline\n"
    }

    func encoded() -> [UInt8] {
        var log = PendingLog()
        for change in changes { log.append(change) }
        return encoded(pending: log)
    }

    /// The file with `log`'s changes (in place of ``changes``): a save frames the local changes
    /// its store encoded as they were made.
    func encoded(pending log: PendingLog) -> [UInt8] {
        let pieces = encodedPieces(pending: log)
        var bytes = pieces.head
        bytes.reserveCapacity(pieces.head.count + pieces.body.count + pieces.tail.count)
        bytes += pieces.body
        bytes += pieces.tail
        return bytes
    }

    /// The same file as ``encoded(pending:)`` in three pieces to write one after the other — the
    /// header and name table, `log`'s changes (its own bytes, not copied), the checksum and
    /// trailer — so a save neither copies the changes (a megabyte for 10,000 of them) into one
    /// buffer nor reads them twice: the checksum runs over the pieces in turn.
    func encodedPieces(pending log: PendingLog) -> (head: [UInt8], body: [UInt8], tail: [UInt8]) {
        var writer = LogWriter()
        writer.bytes.reserveCapacity(256 + 40 * (coverage.count + log.names.count))
        writer.bytes += Array(Self.title(of: kind).utf8)
        writer.bytes += Self.magic
        writer.u8(Self.currentFormat)
        writer.u8(kind.rawValue)
        writer.u32(UInt32(truncatingIfNeeded: schemaVersion))
        writer.string(device)
        writer.u64(sequence)
        writer.u64(writtenMilliseconds)
        writer.u32(UInt32(coverage.count))
        for (device, sequence) in coverage.sorted(by: { $0.key < $1.key }) {
            writer.string(device)
            writer.u64(sequence)
        }
        writer.u32(UInt32(log.names.count))
        for text in log.names { writer.string(text) }
        writer.u32(UInt32(truncatingIfNeeded: log.count))
        let body = log.body.bytes
        var tail = LogWriter()
        tail.u32(CRC32.finish(CRC32.update(CRC32.update(CRC32.start, writer.bytes), body)))
        tail.bytes += Self.trailer
        return (writer.bytes, body, tail.bytes)
    }

    /// What the header says, read without the changes (to decide whether to read the rest).
    struct Header: Sendable, Equatable {
        var kind: Kind
        var schemaVersion: Int
        var device: String
        var sequence: UInt64
        var coverage: [String: UInt64]
    }

    /// Decodes a whole file, checking its checksum first.
    ///
    /// - Throws: ``LogReader/Damaged`` for a truncated, damaged or unknown file (or one of a later format).
    static func decode(_ bytes: [UInt8]) throws(LogReader.Damaged) -> ChangeLogFile {
        let indexed = try decodeIndexed(bytes)
        var file = indexed.file
        file.changes = indexed.changes.map { change in
            var registers: [String: Register] = [:]
            registers.reserveCapacity(change.registers.count)
            for (name, register) in indexed.registers[change.registers] { registers[indexed.names[name]] = register }
            return RecordChange(entity: indexed.names[change.entity], id: change.id, registers: registers)
        }
        return file
    }

    /// Decodes a whole file as ``decode(_:)`` does, its changes left as the file has them:
    /// entities and attributes named by index into its name table (an import maps each index
    /// to a column once per file instead of hashing every register's name).
    ///
    /// - Throws: ``LogReader/Damaged`` for a truncated, damaged or unknown file (or one of a later format).
    static func decodeIndexed(_ bytes: [UInt8]) throws(LogReader.Damaged) -> IndexedLogFile {
        guard bytes.count >= trailer.count + 4, Array(bytes.suffix(trailer.count)) == trailer else {
            throw LogReader.Damaged(reason: "it has no end marker (truncated, or still being written)")
        }
        let checked = bytes.count - trailer.count - 4
        var crcReader = LogReader(bytes, offset: checked)
        let stored = try crcReader.u32()
        guard CRC32.checksum(bytes[0..<checked]) == stored else {
            throw LogReader.Damaged(reason: "its checksum does not match (damaged)")
        }
        var reader = LogReader(bytes, end: checked)
        let header = try readHeader(&reader)
        let nameCount = Int(try reader.u32())
        guard nameCount <= reader.remaining else { throw LogReader.Damaged(reason: "its name table is too long") }
        var names: [String] = []
        names.reserveCapacity(nameCount)
        for _ in 0..<nameCount { names.append(try reader.string()) }
        func nameIndex(_ index: Int) throws(LogReader.Damaged) -> Int {
            guard index >= 0, index < names.count else { throw LogReader.Damaged(reason: "a name index is out of range") }
            return index
        }
        let changeCount = Int(try reader.u32())
        guard changeCount <= reader.remaining else { throw LogReader.Damaged(reason: "its change count is too large") }
        var changes: [IndexedChange] = []
        changes.reserveCapacity(changeCount)
        // Every change's registers in one array (a change holds its range): no array per change.
        var registers: [(name: Int, register: Register)] = []
        registers.reserveCapacity(min(reader.remaining / 6, changeCount * 8))
        for _ in 0..<changeCount {
            let first = registers.count
            if header.format >= 2 {
                // The change's clock, which its registers have unless they carry their own.
                let entity = try nameIndex(try reader.count())
                let id = try reader.uuid()
                let packed = try reader.u64()
                let base = HybridTimestamp(packed: packed, device: names[try nameIndex(try reader.count())])
                let registerCount = try reader.count()
                guard registerCount <= reader.remaining else { throw LogReader.Damaged(reason: "a change has too many registers") }
                for _ in 0..<registerCount {
                    let flagged = try reader.count()
                    let attribute = try nameIndex(flagged >> 1)
                    let value = try reader.compactValue()
                    var timestamp = base
                    if flagged & 1 != 0 {
                        let packed = try reader.u64()
                        timestamp = HybridTimestamp(packed: packed, device: names[try nameIndex(try reader.count())])
                    }
                    registers.append((attribute, Register(value: value, timestamp: timestamp)))
                }
                changes.append(IndexedChange(entity: entity, id: id, registers: first..<registers.count))
            } else {
                // Format 1: every register with its clock, fixed-size fields.
                let entity = try nameIndex(Int(try reader.u32()))
                let id = try reader.uuid()
                let registerCount = Int(try reader.u16())
                for _ in 0..<registerCount {
                    let attribute = try nameIndex(Int(try reader.u32()))
                    let value = try reader.value()
                    let packed = try reader.u64()
                    let device = names[try nameIndex(Int(try reader.u32()))]
                    registers.append((attribute, Register(value: value, timestamp: HybridTimestamp(packed: packed, device: device))))
                }
                changes.append(IndexedChange(entity: entity, id: id, registers: first..<registers.count))
            }
        }
        guard reader.remaining == 0 else { throw LogReader.Damaged(reason: "it has \(reader.remaining) unexpected bytes") }
        let file = ChangeLogFile(kind: header.kind, schemaVersion: header.schemaVersion, device: header.device,
                                 sequence: header.sequence, writtenMilliseconds: header.written, coverage: header.coverage,
                                 changes: [])
        return IndexedLogFile(file: file, names: names, changes: changes, registers: registers)
    }

    private static func readHeader(_ reader: inout LogReader) throws(LogReader.Damaged)
        -> (format: UInt8, kind: Kind, schemaVersion: Int, device: String, sequence: UInt64, written: UInt64, coverage: [String: UInt64]) {
        // The title line, then the magic.
        guard let newline = reader.bytes.firstIndex(of: 0x0A), newline < 64 else {
            throw LogReader.Damaged(reason: "it is not a ManagedDocuments change log (no title line)")
        }
        _ = try reader.take(newline + 1)
        guard Array(try reader.take(magic.count)) == magic else {
            throw LogReader.Damaged(reason: "it is not a ManagedDocuments change log (no MDLOG marker)")
        }
        let format = try reader.u8()
        guard format >= 1 else { throw LogReader.Damaged(reason: "it has format 0, which no program wrote") }
        guard format <= currentFormat else {
            throw LogReader.Damaged(reason: "it has format \(format), newer than this program's \(currentFormat)")
        }
        guard let kind = Kind(rawValue: try reader.u8()) else { throw LogReader.Damaged(reason: "it has an unknown kind") }
        let schemaVersion = Int(try reader.u32())
        let device = try reader.string()
        let sequence = try reader.u64()
        let written = try reader.u64()
        let coverageCount = Int(try reader.u32())
        guard coverageCount <= reader.remaining else { throw LogReader.Damaged(reason: "its coverage is too long") }
        var coverage: [String: UInt64] = [:]
        for _ in 0..<coverageCount {
            let device = try reader.string()
            coverage[device] = try reader.u64()
        }
        return (format, kind, schemaVersion, device, sequence, written, coverage)
    }
}

/// A change as its file holds it: the entity and each register's attribute named by their index
/// in the file's name table (``IndexedLogFile/names``), its registers a range of
/// ``IndexedLogFile/registers``.
struct IndexedChange: Sendable {
    var entity: Int
    var id: UUID
    var registers: Range<Int>
}

/// A decoded file whose changes keep the file's name indices (``ChangeLogFile/decodeIndexed(_:)``):
/// the header in ``file`` (its `changes` empty), the name table, the changes, and the registers
/// of every change in one array.
struct IndexedLogFile: Sendable {
    var file: ChangeLogFile
    var names: [String]
    var changes: [IndexedChange]
    var registers: [(name: Int, register: Register)]
}
