import Glibc

/// Collects bytes read from a stream and cuts them into frames (`RemoteMessageCodec`'s
/// `[length][body]`). A length over the limit is a protocol violation reported before the body
/// is read, so a peer cannot make us buffer more than one frame's worth: after `next()` returned
/// nil, at most `headerLength + maximumFrameLength - 1` bytes are kept, and a reader appends one
/// chunk (`RemoteBounds.readChunk`) at a time, each followed by `next()` until nil.
///
/// Frames are cut without moving the bytes after them (a read offset; the buffer is compacted
/// when the offset passes half of it), so a chunk of many small frames costs linear time.
///
/// No descriptor ever travels beside a frame: the connections are read with plain `recv`, so the
/// kernel discards (closes) any a peer attaches.
struct FrameBuffer {
    private var bytes: [UInt8] = []
    /// Where the next frame starts in `bytes`.
    private var start = 0

    /// Bytes held and not yet cut into a frame.
    var count: Int { bytes.count - start }

    mutating func append(_ chunk: UnsafeRawBufferPointer) {
        if start > 0, start >= bytes.count / 2 {
            bytes.removeFirst(start)
            start = 0
        }
        bytes.append(contentsOf: chunk)
    }

    /// The next whole frame, decoded; nil when more bytes are needed. Throws for a frame that
    /// cannot be decoded (the stream is then unusable: frames no longer line up).
    mutating func next() throws(RemoteCodecError) -> RemoteFrame? {
        let header = RemoteMessageCodec.headerLength
        guard count >= header else {
            if count == 0, start > 0 { bytes.removeAll(keepingCapacity: bytes.capacity <= 2 * RemoteBounds.readChunk); start = 0 }
            return nil
        }
        let length = try RemoteMessageCodec.bodyLength(header: Array(bytes[start..<start + header]))
        let end = start + header + length
        guard bytes.count >= end else { return nil }
        let body = Array(bytes[start + header..<end])
        start = end
        return try RemoteMessageCodec.decode(body: body)
    }
}
