import Glibc

/// One event read from an `inotify` descriptor: the watch it is about, what happened, the cookie
/// pairing the two halves of a rename, and the entry's name (a lossless path string; empty for
/// an event about the watched folder itself).
package struct InotifyEvent: Sendable {
    package let descriptor: Int32
    package let mask: UInt32
    package let cookie: UInt32
    package let name: String

    /// The events in the first `count` bytes of `buffer`, as one `read` of an `inotify`
    /// descriptor returned them (whole events only; a partial one at the end is left out).
    package static func decode(_ buffer: UnsafeRawPointer, count: Int) -> [InotifyEvent] {
        var events: [InotifyEvent] = []
        var offset = 0
        while offset + MemoryLayout<inotify_event>.size <= count {
            let event = buffer.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
            let nameLength = Int(event.len)
            var name = ""
            if nameLength > 0 {
                // The name's bytes, NUL-padded; kept exact (it may not be UTF-8).
                let bytes = UnsafeRawBufferPointer(start: buffer + offset + MemoryLayout<inotify_event>.size, count: nameLength)
                name = PathBytes.string(fromBytes: bytes.prefix(while: { $0 != 0 }))
            }
            offset += MemoryLayout<inotify_event>.size + nameLength
            events.append(InotifyEvent(descriptor: event.wd, mask: event.mask, cookie: event.cookie, name: name))
        }
        return events
    }
}
