import Foundation
import Glibc

/// The content digest some servers use as their ETag: Apache `mod_dav_fs` with `FileETag Digest`
/// gives `"<base64 of the SHA-1 of the bytes>"`. With it, a tag read after an upload can be
/// checked against the uploaded bytes without downloading them. Any thread; streams the file
/// through a 64 KiB buffer.
enum ContentDigest {
    /// Whether `tag` has the shape of a base64 SHA-1 (28 characters, one `=` of padding).
    static func looksLikeSHA1(_ tag: RemoteTag) -> Bool {
        let value = tag.value.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        return value.utf8.count == 28 && value.hasSuffix("=") && Data(base64Encoded: value)?.count == 20
    }

    /// Whether `tag` is the base64 SHA-1 of the bytes of the file at `path` (`false` when the
    /// file cannot be read).
    static func tag(_ tag: RemoteTag, isSHA1Of path: String) -> Bool {
        let value = tag.value.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        guard let digest = sha1(ofFileAt: path) else { return false }
        return Data(digest).base64EncodedString() == value
    }

    /// Whether `tag` is the base64 SHA-1 of the bytes of the open file `descriptor` (read from
    /// its start with `pread`; `false` when it cannot be read).
    static func tag(_ tag: RemoteTag, isSHA1OfOpenFile descriptor: Int32) -> Bool {
        let value = tag.value.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        guard let digest = sha1(ofOpenFile: descriptor) else { return false }
        return Data(digest).base64EncodedString() == value
    }

    /// The SHA-1 of the file at `path`, `nil` when it cannot be read.
    static func sha1(ofFileAt path: String) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        return sha1(ofOpenFile: descriptor)
    }

    /// The SHA-1 of the open file `descriptor` from its start (`pread`: its offset is left
    /// alone), `nil` when it cannot be read.
    static func sha1(ofOpenFile descriptor: Int32) -> [UInt8]? {
        var hasher = SHA1()
        var buffer = [UInt8](repeating: 0, count: LocalFiles.bufferSize)
        var offset: off_t = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, offset) }
            if count < 0 { if errno == EINTR { continue }; return nil }
            if count == 0 { break }
            hasher.update(buffer[0..<count])
            offset += off_t(count)
        }
        return hasher.finish()
    }

    /// SHA-1 (FIPS 180-4), only to compare with a server's tag — not for anything secret.
    struct SHA1 {
        private var state: [UInt32] = [0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0]
        private var pending: [UInt8] = []
        private var length: UInt64 = 0

        mutating func update(_ bytes: ArraySlice<UInt8>) {
            length &+= UInt64(bytes.count)
            pending.append(contentsOf: bytes)
            var offset = 0
            while pending.count - offset >= 64 {
                block(pending[offset..<(offset + 64)])
                offset += 64
            }
            pending.removeFirst(offset)
        }

        mutating func finish() -> [UInt8] {
            let bits = length &* 8
            var tail = pending + [0x80]
            while tail.count % 64 != 56 { tail.append(0) }
            for shift in stride(from: 56, through: 0, by: -8) { tail.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
            var offset = 0
            while offset < tail.count {
                block(tail[offset..<(offset + 64)])
                offset += 64
            }
            return state.flatMap { word in [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: word >> UInt32($0)) } }
        }

        private mutating func block(_ chunk: ArraySlice<UInt8>) {
            var words = [UInt32](repeating: 0, count: 80)
            let base = chunk.startIndex
            for index in 0..<16 {
                words[index] = UInt32(chunk[base + index * 4]) << 24 | UInt32(chunk[base + index * 4 + 1]) << 16
                    | UInt32(chunk[base + index * 4 + 2]) << 8 | UInt32(chunk[base + index * 4 + 3])
            }
            for index in 16..<80 {
                let mixed = words[index - 3] ^ words[index - 8] ^ words[index - 14] ^ words[index - 16]
                words[index] = mixed << 1 | mixed >> 31
            }
            var (a, b, c, d, e) = (state[0], state[1], state[2], state[3], state[4])
            for index in 0..<80 {
                let (f, k): (UInt32, UInt32) = switch index {
                case 0..<20: ((b & c) | (~b & d), 0x5A82_7999)
                case 20..<40: (b ^ c ^ d, 0x6ED9_EBA1)
                case 40..<60: ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC)
                default: (b ^ c ^ d, 0xCA62_C1D6)
                }
                let temporary = (a << 5 | a >> 27) &+ f &+ e &+ k &+ words[index]
                (e, d, c, b, a) = (d, c, b << 30 | b >> 2, a, temporary)
            }
            state[0] &+= a
            state[1] &+= b
            state[2] &+= c
            state[3] &+= d
            state[4] &+= e
        }
    }
}
