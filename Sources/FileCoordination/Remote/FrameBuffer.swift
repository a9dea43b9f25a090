/// Collects bytes read from a stream and cuts them into frames (`RemoteMessageCodec`'s
/// `[length][body]`). A length over the limit is a protocol violation reported before the body
/// is read, so a peer cannot make us buffer more than one frame's worth.
struct FrameBuffer {
    private var bytes: [UInt8] = []

    mutating func append(_ chunk: UnsafeRawBufferPointer) { bytes.append(contentsOf: chunk) }

    /// The next whole frame, decoded; nil when more bytes are needed. Throws for a frame that
    /// cannot be decoded (the stream is then unusable: frames no longer line up).
    mutating func next() throws(RemoteCodecError) -> RemoteFrame? {
        guard bytes.count >= RemoteMessageCodec.headerLength else { return nil }
        let length = try RemoteMessageCodec.bodyLength(header: Array(bytes[0..<RemoteMessageCodec.headerLength]))
        let end = RemoteMessageCodec.headerLength + length
        guard bytes.count >= end else { return nil }
        let body = Array(bytes[RemoteMessageCodec.headerLength..<end])
        bytes.removeFirst(end)
        return try RemoteMessageCodec.decode(body: body)
    }
}
