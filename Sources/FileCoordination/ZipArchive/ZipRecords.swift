import Glibc

/// Where 32-bit and 16-bit ZIP fields run out and ZIP64 records take over. The standard limits
/// are the field maxima (a field holding all ones means "see the ZIP64 record"); tests lower
/// them to exercise the ZIP64 records without writing gigabytes.
struct ZipLimits: Sendable {
    /// Sizes and offsets at or above this go into ZIP64 extra fields / the ZIP64 end record.
    var field32: UInt64 = 0xFFFF_FFFF
    /// Entry counts at or above this go into the ZIP64 end record.
    var entryCount: UInt64 = 0xFFFF

    static let standard = ZipLimits()
}

/// One archive member as the central directory needs it, once its data is written.
struct ZipMember {
    /// The member's path inside the archive: raw bytes, `/`-separated, directories end in `/`.
    var name: [UInt8]
    /// `st_mode` of the item (file type and permission bits), kept in the external attributes.
    var mode: UInt32
    var modified: Int
    var crc: UInt32 = 0
    var size: UInt64 = 0
    var headerOffset: UInt64 = 0
    /// Whether the local header carries a ZIP64 extra field for the sizes.
    var sizesInZip64: Bool = false

    var isDirectory: Bool { mode & UInt32(S_IFMT) == UInt32(S_IFDIR) }
}

/// The byte layout of the ZIP records this package writes (APPNOTE.TXT 6.3: local file header
/// 4.3.7, central directory header 4.3.12, ZIP64 extra field 4.5.3, ZIP64 end of central
/// directory record 4.3.14 and locator 4.3.15, end of central directory record 4.3.16).
/// Every member is *stored* (method 0): no compression.
enum ZipRecords {
    private static let versionMadeBy: UInt16 = 3 << 8 | 45  // Unix; APPNOTE 4.5
    private static let zip64Extra: UInt16 = 0x0001
    private static let utf8Flag: UInt16 = 1 << 11

    /// The size of a member's local header, known before its data is read (so the data can be
    /// streamed after a placeholder and the header written once the CRC and size are known).
    static func localHeaderSize(_ member: ZipMember) -> Int {
        30 + member.name.count + (member.sizesInZip64 ? 20 : 0)
    }

    static func localHeader(_ member: ZipMember) -> [UInt8] {
        var bytes = ZipBytes()
        let (time, date) = dosDateTime(member.modified)
        bytes.append(UInt32(0x0403_4B50))
        bytes.append(member.sizesInZip64 ? UInt16(45) : UInt16(20))
        bytes.append(flags(member.name))
        bytes.append(UInt16(0))  // stored
        bytes.append(time)
        bytes.append(date)
        bytes.append(member.crc)
        let size32 = member.sizesInZip64 ? UInt32.max : UInt32(truncatingIfNeeded: member.size)
        bytes.append(size32)  // compressed size
        bytes.append(size32)  // uncompressed size
        bytes.append(UInt16(truncatingIfNeeded: member.name.count))
        bytes.append(member.sizesInZip64 ? UInt16(20) : UInt16(0))
        bytes.append(member.name)
        if member.sizesInZip64 {
            bytes.append(zip64Extra)
            bytes.append(UInt16(16))
            bytes.append(member.size)  // uncompressed
            bytes.append(member.size)  // compressed
        }
        return bytes.bytes
    }

    static func centralHeader(_ member: ZipMember, limits: ZipLimits) -> [UInt8] {
        let sizesOverflow = member.sizesInZip64 || member.size >= limits.field32
        let offsetOverflows = member.headerOffset >= limits.field32
        var extra = ZipBytes()
        if sizesOverflow || offsetOverflows {
            extra.append(zip64Extra)
            extra.append(UInt16((sizesOverflow ? 16 : 0) + (offsetOverflows ? 8 : 0)))
            if sizesOverflow {
                extra.append(member.size)  // uncompressed
                extra.append(member.size)  // compressed
            }
            if offsetOverflows { extra.append(member.headerOffset) }
        }
        var bytes = ZipBytes()
        let (time, date) = dosDateTime(member.modified)
        bytes.append(UInt32(0x0201_4B50))
        bytes.append(versionMadeBy)
        bytes.append(extra.bytes.isEmpty ? UInt16(20) : UInt16(45))
        bytes.append(flags(member.name))
        bytes.append(UInt16(0))  // stored
        bytes.append(time)
        bytes.append(date)
        bytes.append(member.crc)
        let size32 = sizesOverflow ? UInt32.max : UInt32(truncatingIfNeeded: member.size)
        bytes.append(size32)
        bytes.append(size32)
        bytes.append(UInt16(truncatingIfNeeded: member.name.count))
        bytes.append(UInt16(extra.bytes.count))
        bytes.append(UInt16(0))  // comment length
        bytes.append(UInt16(0))  // disk number start
        bytes.append(UInt16(0))  // internal attributes
        bytes.append(member.mode << 16 | (member.isDirectory ? 0x10 : 0))  // Unix mode, MS-DOS directory bit
        bytes.append(offsetOverflows ? UInt32.max : UInt32(truncatingIfNeeded: member.headerOffset))
        bytes.append(member.name)
        bytes.append(extra.bytes)
        return bytes.bytes
    }

    /// The end of the archive: the end of central directory record, preceded by the ZIP64 end
    /// record and its locator when the entry count, the directory's size or its offset do not
    /// fit. `endOffset` is where these bytes start.
    static func end(entryCount: UInt64, centralSize: UInt64, centralOffset: UInt64, endOffset: UInt64,
                    limits: ZipLimits) -> [UInt8] {
        let countOverflows = entryCount >= limits.entryCount
        let sizeOverflows = centralSize >= limits.field32
        let offsetOverflows = centralOffset >= limits.field32
        var bytes = ZipBytes()
        if countOverflows || sizeOverflows || offsetOverflows {
            bytes.append(UInt32(0x0606_4B50))
            bytes.append(UInt64(44))  // size of the rest of this record
            bytes.append(versionMadeBy)
            bytes.append(UInt16(45))
            bytes.append(UInt32(0))  // this disk
            bytes.append(UInt32(0))  // disk where the central directory starts
            bytes.append(entryCount)  // entries on this disk
            bytes.append(entryCount)  // entries in total
            bytes.append(centralSize)
            bytes.append(centralOffset)
            bytes.append(UInt32(0x0706_4B50))
            bytes.append(UInt32(0))  // disk holding the ZIP64 end record
            bytes.append(endOffset)  // where the ZIP64 end record starts
            bytes.append(UInt32(1))  // number of disks
        }
        let count16 = countOverflows ? UInt16.max : UInt16(truncatingIfNeeded: entryCount)
        bytes.append(UInt32(0x0605_4B50))
        bytes.append(UInt16(0))
        bytes.append(UInt16(0))
        bytes.append(count16)
        bytes.append(count16)
        bytes.append(sizeOverflows ? UInt32.max : UInt32(truncatingIfNeeded: centralSize))
        bytes.append(offsetOverflows ? UInt32.max : UInt32(truncatingIfNeeded: centralOffset))
        bytes.append(UInt16(0))  // comment length
        return bytes.bytes
    }

    /// General-purpose flags: bit 11 (names are UTF-8) only for names that are valid UTF-8;
    /// other Linux names are stored as the bytes they are.
    private static func flags(_ name: [UInt8]) -> UInt16 {
        String(validating: name, as: UTF8.self) != nil ? utf8Flag : 0
    }

    /// MS-DOS date and time (local time, two-second resolution), clamped to 1980...2107.
    static func dosDateTime(_ seconds: Int) -> (time: UInt16, date: UInt16) {
        var clock = time_t(seconds)
        var parts = tm()
        guard localtime_r(&clock, &parts) != nil else { return (0, 0x21) }
        let year = Int(parts.tm_year) + 1900
        if year < 1980 { return (0, 0x21) }  // 1980-01-01 00:00
        if year > 2107 { return (0xBF7D, 0xFF9F) }  // 2107-12-31 23:59:58
        let time = UInt16(parts.tm_hour) << 11 | UInt16(parts.tm_min) << 5 | UInt16(min(parts.tm_sec, 59) / 2)
        let date = UInt16(year - 1980) << 9 | UInt16(parts.tm_mon + 1) << 5 | UInt16(parts.tm_mday)
        return (time, date)
    }
}

/// Little-endian byte assembly for the records above.
struct ZipBytes {
    var bytes: [UInt8] = []

    mutating func append<Value: FixedWidthInteger>(_ value: Value) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func append(_ raw: [UInt8]) {
        bytes.append(contentsOf: raw)
    }
}
