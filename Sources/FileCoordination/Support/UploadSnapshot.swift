import Foundation

/// Temporary copies for `.forUploading` reads: a copy of a file, or a ZIP archive of a directory,
/// in a fresh private folder under the temporary directory (removed after the accessor returns).
enum UploadSnapshot {
    static func make(of url: URL, isDirectory: Bool) throws(CoordinationError) -> URL {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("clouddocuments-upload-\(UUID().uuidString)", isDirectory: true)
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
            if isDirectory {
                let archive = folder.appendingPathComponent(url.lastPathComponent + ".zip")
                try StoredZipArchive.write(directory: url, to: archive)
                return archive
            }
            let copy = folder.appendingPathComponent(url.lastPathComponent)
            try FileManager.default.copyItem(at: url, to: copy)
            return copy
        } catch {
            try? FileManager.default.removeItem(at: folder)
            throw .invalidRequest("could not make the upload snapshot of \(url.path): \(error.localizedDescription)")
        }
    }
}

/// Writes a ZIP archive of a directory with every entry *stored* (no compression), which any unzip
/// tool reads. Enough for upload snapshots; not a general ZIP library.
enum StoredZipArchive {
    static func write(directory: URL, to archive: URL) throws {
        let manager = FileManager.default
        let base = directory.standardizedFileURL.path
        var entries: [(name: String, data: Data, isDirectory: Bool)] = []
        if let walker = manager.enumerator(atPath: base) {
            while let relative = walker.nextObject() as? String {
                let full = base + "/" + relative
                var isDirectory: ObjCBool = false
                guard manager.fileExists(atPath: full, isDirectory: &isDirectory) else { continue }
                if isDirectory.boolValue {
                    entries.append((relative + "/", Data(), true))
                } else {
                    entries.append((relative, try Data(contentsOf: URL(fileURLWithPath: full)), false))
                }
            }
        }
        var body = Data()
        var central = Data()
        for entry in entries.sorted(by: { $0.name < $1.name }) {
            let name = Data(entry.name.utf8)
            let crc = CRC32.checksum(entry.data)
            let offset = UInt32(truncatingIfNeeded: body.count)
            body.appendLE(UInt32(0x0403_4b50)); body.appendLE(UInt16(20)); body.appendLE(UInt16(0x0800))
            body.appendLE(UInt16(0)); body.appendLE(UInt16(0)); body.appendLE(UInt16(0x21))
            body.appendLE(crc); body.appendLE(UInt32(entry.data.count)); body.appendLE(UInt32(entry.data.count))
            body.appendLE(UInt16(name.count)); body.appendLE(UInt16(0))
            body.append(name); body.append(entry.data)
            central.appendLE(UInt32(0x0201_4b50)); central.appendLE(UInt16(0x031e)); central.appendLE(UInt16(20))
            central.appendLE(UInt16(0x0800)); central.appendLE(UInt16(0)); central.appendLE(UInt16(0))
            central.appendLE(UInt16(0x21)); central.appendLE(crc)
            central.appendLE(UInt32(entry.data.count)); central.appendLE(UInt32(entry.data.count))
            central.appendLE(UInt16(name.count)); central.appendLE(UInt16(0)); central.appendLE(UInt16(0))
            central.appendLE(UInt16(0)); central.appendLE(UInt16(0))
            central.appendLE(UInt32(entry.isDirectory ? 0o40755 << 16 | 0x10 : 0o100644 << 16))
            central.appendLE(offset); central.append(name)
        }
        var end = Data()
        end.appendLE(UInt32(0x0605_4b50)); end.appendLE(UInt16(0)); end.appendLE(UInt16(0))
        end.appendLE(UInt16(entries.count)); end.appendLE(UInt16(entries.count))
        end.appendLE(UInt32(central.count)); end.appendLE(UInt32(body.count)); end.appendLE(UInt16(0))
        try (body + central + end).write(to: archive)
    }
}

enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    static func checksum(_ data: Data) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in data { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }
}

extension Data {
    mutating func appendLE<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }
}
