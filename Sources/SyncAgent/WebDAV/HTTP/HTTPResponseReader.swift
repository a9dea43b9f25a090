/// Reads one answer from an ``HTTPConnection``: its head (interim `1xx` answers skipped), then its
/// body as the head frames it, handed out piece by piece as it arrives (never collected here).
///
/// Framing (RFC 9112 §6.3): no body for a `HEAD` request and for `1xx`, `204` and `304` answers;
/// `Transfer-Encoding` ending in `chunked` is decoded (``HTTPChunkedDecoder``), any other
/// transfer coding is read until the server closes; else `Content-Length` (every value the same
/// decimal number, else ``HTTPFailure/malformed(_:)``); else until the server closes.
enum HTTPResponseReader {
    /// How the body of an answer ends.
    enum Framing: Equatable {
        case none
        case length(UInt64)
        case chunked
        case untilClose
    }

    /// How reading a body ended.
    enum BodyEnd {
        /// The whole body was read.
        case complete
        /// `deliver` returned `false`.
        case stopped
    }

    /// The most interim (`1xx`) answers skipped before the final one.
    static let maximumInterimAnswers = 8

    /// Reads the final answer's head. `answerStarted` becomes `true` with the first byte of an
    /// answer. The server closing or resetting the connection before any byte is
    /// ``HTTPFailure/closedByServer(_:)``; after some, ``HTTPFailure/transport(_:)``; a head
    /// larger than the connection's buffer, or not HTTP, ``HTTPFailure/malformed(_:)``.
    static func readHead(_ connection: HTTPConnection, limits: HTTPWaitLimits,
                         answerStarted: inout Bool) throws(HTTPFailure) -> HTTPResponseHead {
        var scanned = 0
        var interim = 0
        while true {
            let buffered = connection.buffered
            if !buffered.isEmpty {
                answerStarted = true
                try HTTPResponseHead.checkStart(buffered)
            }
            if HTTPResponseHead.end(in: buffered, from: scanned - 2) != nil, let parsed = try HTTPResponseHead.parse(buffered) {
                let head = parsed.head
                connection.consume(parsed.length)
                scanned = 0
                if head.status == 101 { throw .malformed("the server switched protocols unasked (101)") }
                if head.status < 200 {
                    interim += 1
                    guard interim <= maximumInterimAnswers else { throw .malformed("more than \(maximumInterimAnswers) interim answers") }
                    continue
                }
                return head
            }
            scanned = buffered.count
            if connection.isBufferFull {
                throw .malformed("the answer's header is larger than \(HTTPConnection.bufferSize / 1024) KiB")
            }
            let count: Int
            do {
                count = try connection.fill(limits: limits)
            } catch {
                if answerStarted, case .closedByServer(let reason) = error { throw .transport(reason + " in the middle of the answer's header") }
                throw error
            }
            if count == 0 {
                if answerStarted { throw .transport("the server closed the connection in the middle of the answer's header") }
                throw .closedByServer("the server closed the connection without answering")
            }
        }
    }

    /// How the body of `head`, the answer to a `method` request, is framed.
    static func framing(of head: HTTPResponseHead, method: String) throws(HTTPFailure) -> Framing {
        if method == "HEAD" || head.status < 200 || head.status == 204 || head.status == 304 { return .none }
        if head.field("transfer-encoding") != nil {
            return head.tokens("transfer-encoding").last == "chunked" ? .chunked : .untilClose
        }
        if let text = head.field("content-length") {
            let values = Set(text.split(separator: ",").map { $0.trimmingHTTPWhitespace() })
            guard values.count == 1, let value = values.first, !value.isEmpty, value.utf8.count <= 18,
                  value.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let length = UInt64(value) else {
                throw .malformed("Content-Length is not one decimal number")
            }
            return .length(length)
        }
        return .untilClose
    }

    /// Whether the connection may carry another request after this answer: HTTP/1.1 without
    /// `Connection: close` (HTTP/1.0 with `Connection: keep-alive`), and a body that ends by its
    /// framing (not by the server closing), with no `Transfer-Encoding` beside `Content-Length`.
    static func keepsAlive(_ head: HTTPResponseHead, framing: Framing) -> Bool {
        if framing == .untilClose { return false }
        if head.field("transfer-encoding") != nil && head.field("content-length") != nil { return false }
        let connection = head.tokens("connection")
        if connection.contains("close") { return false }
        return head.minorVersion >= 1 || connection.contains("keep-alive")
    }

    /// Reads the body framed by `framing`, calling `deliver` with each piece as it arrives (the
    /// piece is valid only during the call; `false` stops reading). A body cut short (the server
    /// closed or reset the connection) is ``HTTPFailure/transport(_:)``.
    static func readBody(_ connection: HTTPConnection, framing: Framing, limits: HTTPWaitLimits,
                         deliver: (UnsafeRawBufferPointer) -> Bool) throws(HTTPFailure) -> BodyEnd {
        switch framing {
        case .none:
            return .complete
        case .length(let length):
            var remaining = length
            while remaining > 0 {
                if connection.buffered.isEmpty {
                    guard try fill(connection, limits) > 0 else {
                        throw .transport("the server closed the connection after \(length - remaining) of the \(length) bytes announced")
                    }
                }
                let buffered = connection.buffered
                let count = Int(min(remaining, UInt64(buffered.count)))
                let goOn = deliver(UnsafeRawBufferPointer(rebasing: buffered[..<count]))
                connection.consume(count)
                remaining -= UInt64(count)
                if !goOn { return .stopped }
            }
            return .complete
        case .chunked:
            var decoder = HTTPChunkedDecoder()
            while true {
                let buffered = connection.buffered
                if !buffered.isEmpty {
                    let (used, stopped) = try decoder.decode(buffered, deliver: deliver)
                    connection.consume(used)
                    if stopped { return .stopped }
                    if decoder.isDone { return .complete }
                }
                guard try fill(connection, limits) > 0 else {
                    throw .transport("the server closed the connection in the middle of a chunked body")
                }
            }
        case .untilClose:
            while true {
                let buffered = connection.buffered
                if !buffered.isEmpty {
                    let goOn = deliver(buffered)
                    connection.consume(buffered.count)
                    if !goOn { return .stopped }
                }
                if try fill(connection, limits) == 0 { return .complete }
            }
        }
    }

    /// ``HTTPConnection/fill(limits:)`` where a reset is a transport failure (an answer began).
    private static func fill(_ connection: HTTPConnection, _ limits: HTTPWaitLimits) throws(HTTPFailure) -> Int {
        do {
            return try connection.fill(limits: limits)
        } catch {
            if case .closedByServer(let reason) = error { throw .transport(reason + " in the middle of the answer's body") }
            throw error
        }
    }
}
