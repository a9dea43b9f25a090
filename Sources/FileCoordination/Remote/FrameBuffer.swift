import Glibc

/// Collects bytes read from a stream and cuts them into frames (`RemoteMessageCodec`'s
/// `[length][body]`). A length over the limit is a protocol violation reported before the body
/// is read, so a peer cannot make us buffer more than one frame's worth.
///
/// Descriptors received beside the bytes (`SCM_RIGHTS`, `UnixSocket.receive`) wait in
/// `descriptors` and go, first in first out, to the requests that lend locks, one per holding.
struct FrameBuffer {
    private var bytes: [UInt8] = []
    /// Received descriptors not yet given to a frame (this buffer's to close: `closeDescriptors`).
    var descriptors: [Int32] = []

    mutating func append(_ chunk: UnsafeRawBufferPointer) { bytes.append(contentsOf: chunk) }

    /// The next whole frame, decoded; nil when more bytes are needed. Throws for a frame that
    /// cannot be decoded (the stream is then unusable: frames no longer line up), and for a
    /// request lending more locks than descriptors came with it.
    mutating func next() throws(RemoteCodecError) -> RemoteFrame? {
        guard bytes.count >= RemoteMessageCodec.headerLength else { return nil }
        let length = try RemoteMessageCodec.bodyLength(header: Array(bytes[0..<RemoteMessageCodec.headerLength]))
        let end = RemoteMessageCodec.headerLength + length
        guard bytes.count >= end else { return nil }
        let body = Array(bytes[RemoteMessageCodec.headerLength..<end])
        bytes.removeFirst(end)
        var frame = try RemoteMessageCodec.decode(body: body)
        if case .request(var request) = frame, var borrow = request.borrow, !borrow.holdings.isEmpty {
            guard descriptors.count >= borrow.holdings.count else {
                throw .malformed("\(borrow.holdings.count) locks lent with \(descriptors.count) descriptors")
            }
            borrow.descriptors = Array(descriptors.prefix(borrow.holdings.count))
            descriptors.removeFirst(borrow.holdings.count)
            request.borrow = borrow
            frame = .request(request)
        }
        return frame
    }

    /// Closes the descriptors no frame took (the connection is closing).
    mutating func closeDescriptors() {
        for descriptor in descriptors { close(descriptor) }
        descriptors.removeAll()
    }
}
