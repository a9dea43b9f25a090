import Glibc

/// Open descriptors sent beside a frame as `SCM_RIGHTS` ancillary data — how an asker lends its
/// lock descriptors to a presenter in another process (Docs/RemotePresenters.md §3). The
/// receiver gets new descriptors for the *same* open file descriptions, so the same OFD locks.
///
/// On a stream socket the kernel attaches the descriptors to the first byte of the `sendmsg`
/// that carried them, and a `recvmsg` never reads past bytes that carry descriptors of another
/// send without returning those first; frames and descriptors therefore arrive in the same
/// order, and the receiver matches them first in, first out (`FrameBuffer`'s descriptor queue).
extension UnixSocket {
    /// At most this many descriptors go with one frame (the kernel allows 253): a borrow of more
    /// locks is sent without its locks.
    static let descriptorLimit = 64

    /// `CMSG_ALIGN`, `CMSG_LEN` and `CMSG_SPACE` (C macros Swift does not import).
    private static func align(_ length: Int) -> Int { (length + MemoryLayout<Int>.size - 1) & ~(MemoryLayout<Int>.size - 1) }
    private static var headerSpace: Int { align(MemoryLayout<cmsghdr>.size) }
    private static func controlSpace(descriptors count: Int) -> Int { headerSpace + align(count * MemoryLayout<Int32>.size) }

    /// Sends the first part of `bytes` (as much as the socket takes now) with `descriptors`
    /// attached: the byte count sent (0 with `errno` set when nothing was, for example
    /// `EAGAIN`). The descriptors stay open here; the kernel holds its own references.
    static func sendFirst(_ fd: Int32, _ bytes: [UInt8], descriptors: [Int32]) -> Int {
        var control = [UInt8](repeating: 0, count: controlSpace(descriptors: descriptors.count))
        return bytes.withUnsafeBytes { raw -> Int in
            var vector = iovec(iov_base: UnsafeMutableRawPointer(mutating: raw.baseAddress), iov_len: raw.count)
            return control.withUnsafeMutableBytes { controlBytes -> Int in
                guard let base = controlBytes.baseAddress else { return -1 }
                let header = base.bindMemory(to: cmsghdr.self, capacity: 1)
                header.pointee.cmsg_len = headerSpace + descriptors.count * MemoryLayout<Int32>.size
                header.pointee.cmsg_level = SOL_SOCKET
                header.pointee.cmsg_type = Int32(SCM_RIGHTS)
                let data = base + headerSpace
                for (index, descriptor) in descriptors.enumerated() {
                    data.storeBytes(of: descriptor, toByteOffset: index * MemoryLayout<Int32>.size, as: Int32.self)
                }
                return withUnsafeMutablePointer(to: &vector) { vectorPointer -> Int in
                    var message = msghdr()
                    message.msg_iov = vectorPointer
                    message.msg_iovlen = 1
                    message.msg_control = base
                    message.msg_controllen = controlBytes.count
                    let sent = sendmsg(fd, &message, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
                    return sent > 0 ? sent : 0
                }
            }
        }
    }

    /// Reads what is there into `buffer` (non-blocking), appending the descriptors that came with
    /// it to `descriptors` (close-on-exec). Returns the byte count (0: end of file; -1 with
    /// `errno` set). Descriptors cut off because too many were sent (`MSG_CTRUNC`) make it
    /// return -1 with `errno` `EPROTO`, after closing those received.
    static func receive(_ fd: Int32, into buffer: inout [UInt8], descriptors: inout [Int32]) -> Int {
        var control = [UInt8](repeating: 0, count: controlSpace(descriptors: descriptorLimit))
        let (count, truncated, received) = buffer.withUnsafeMutableBytes { raw -> (Int, Bool, [Int32]) in
            var vector = iovec(iov_base: raw.baseAddress, iov_len: raw.count)
            return control.withUnsafeMutableBytes { controlBytes -> (Int, Bool, [Int32]) in
                withUnsafeMutablePointer(to: &vector) { vectorPointer -> (Int, Bool, [Int32]) in
                    var message = msghdr()
                    message.msg_iov = vectorPointer
                    message.msg_iovlen = 1
                    message.msg_control = controlBytes.baseAddress
                    message.msg_controllen = controlBytes.count
                    let count = recvmsg(fd, &message, Int32(MSG_DONTWAIT) | Int32(MSG_CMSG_CLOEXEC))
                    guard count >= 0, let base = controlBytes.baseAddress else { return (count, false, []) }
                    return (count, message.msg_flags & Int32(MSG_CTRUNC) != 0, descriptorsIn(base, length: message.msg_controllen))
                }
            }
        }
        if truncated {
            for descriptor in received { close(descriptor) }
            errno = EPROTO
            return -1
        }
        descriptors += received
        return count
    }

    /// The `SCM_RIGHTS` descriptors in a received control buffer of `length` bytes.
    private static func descriptorsIn(_ base: UnsafeMutableRawPointer, length: Int) -> [Int32] {
        var result: [Int32] = []
        var offset = 0
        while offset + headerSpace <= length {
            let header = (base + offset).load(as: cmsghdr.self)
            let size = Int(header.cmsg_len)
            guard size >= headerSpace, offset + size <= length else { break }
            if header.cmsg_level == SOL_SOCKET, header.cmsg_type == Int32(SCM_RIGHTS) {
                let count = (size - headerSpace) / MemoryLayout<Int32>.size
                for index in 0..<count {
                    result.append((base + offset + headerSpace).load(fromByteOffset: index * MemoryLayout<Int32>.size, as: Int32.self))
                }
            }
            offset += align(size)
        }
        return result
    }
}
