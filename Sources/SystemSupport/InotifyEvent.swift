import Glibc

/// One event read from an `inotify` descriptor: the watch it is about, what happened, the cookie
/// pairing the two halves of a rename, and the entry's name (a lossless path string; empty for
/// an event about the watched folder itself).
package struct InotifyEvent: Sendable {
    package let descriptor: Int32
    package let mask: UInt32
    package let cookie: UInt32
    package let name: String

    package init(descriptor: Int32, mask: UInt32, cookie: UInt32, name: String) {
        self.descriptor = descriptor
        self.mask = mask
        self.cookie = cookie
        self.name = name
    }

    /// The events in the first `count` bytes of `buffer`, as one `read` of an `inotify`
    /// descriptor returned them (whole events only; a partial one at the end is left out).
    package static func decode(_ buffer: UnsafeRawPointer, count: Int) -> [InotifyEvent] {
        var events: [InotifyEvent] = []
        for event in InotifyReadBatch(buffer, count: count) { events.append(event.decoded) }
        return events
    }
}

/// One read of an `inotify` descriptor as the kernel wrote it, walked without copying: for a
/// client that looks at most events' masks and name bytes only and decodes the few it needs
/// (``InotifyLoopClient/inotifyLoop(_:didReadBatch:)``). Whole events only; a partial one at the
/// end is left out.
///
/// **Lifetime.** It points into the loop's read buffer: valid only during the client call that
/// receives it (the next read overwrites the buffer). Never keep it, or an event's
/// ``InotifyRawEvent/nameBytes``, beyond that call; decode what must stay.
package struct InotifyReadBatch: Sequence {
    private let buffer: UnsafeRawPointer
    private let count: Int

    /// The events in the first `count` bytes of `buffer` (see the lifetime rule above).
    package init(_ buffer: UnsafeRawPointer, count: Int) {
        self.buffer = buffer
        self.count = count
    }

    /// The events, decoded (names as lossless path strings).
    package var decoded: [InotifyEvent] { map(\.decoded) }

    package func makeIterator() -> Iterator { Iterator(buffer: buffer, count: count) }

    package struct Iterator: IteratorProtocol {
        let buffer: UnsafeRawPointer
        let count: Int
        var offset = 0

        package mutating func next() -> InotifyRawEvent? {
            let header = MemoryLayout<inotify_event>.size
            guard offset + header <= count else { return nil }
            let event = buffer.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
            let nameLength = Int(event.len)
            guard offset + header + nameLength <= count else { return nil }  // cut short: left out
            var name = UnsafeRawBufferPointer(start: buffer + offset + header, count: nameLength)
            // NUL-padded: the name ends at its first NUL (kept exact otherwise: it may not be UTF-8).
            if let end = name.firstIndex(of: 0) { name = UnsafeRawBufferPointer(rebasing: name[..<end]) }
            offset += header + nameLength
            return InotifyRawEvent(descriptor: event.wd, mask: event.mask, cookie: event.cookie, nameBytes: name)
        }
    }
}

/// One event of an ``InotifyReadBatch``, its name still the kernel's bytes (see the batch's
/// lifetime rule: ``nameBytes`` is valid only during the client call).
package struct InotifyRawEvent {
    package let descriptor: Int32
    package let mask: UInt32
    package let cookie: UInt32
    /// The entry's name without its NUL padding; empty for an event about the watched folder.
    package let nameBytes: UnsafeRawBufferPointer

    /// The name as a lossless path string.
    package var name: String {
        nameBytes.isEmpty ? "" : PathBytes.string(fromBytes: nameBytes)
    }

    /// The event with its name decoded, to keep.
    package var decoded: InotifyEvent {
        InotifyEvent(descriptor: descriptor, mask: mask, cookie: cookie, name: name)
    }
}
