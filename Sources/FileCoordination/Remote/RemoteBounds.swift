/// The bounds that keep a hostile peer — any program of the same user, which can always connect
/// to a presenting process's socket — from crashing, hanging or exhausting the descriptors,
/// memory or CPU of a process through the transport (Docs/RemotePresenters.md, *Hostile peers*).
/// Every value here is the documented one; the endpoint and the asking links enforce them.
enum RemoteBounds {
    /// Connections one endpoint serves at once. At the cap (or when `accept` finds the process at
    /// its descriptor limit) a newcomer is served and the connection idle the longest is closed:
    /// first among those with nothing in flight, else the longest idle of all.
    static let maximumConnections = 256

    /// A serving connection with nothing in flight (no unanswered request or lookup, no reacquirer
    /// handed out and not given back, nothing queued to send) and no traffic for this long is
    /// closed. An asker reconnects transparently (`RemoteDelivery` replaces a closed link).
    static let idleTimeout: Duration = .seconds(60)

    /// An asking link with nothing in flight and unused for this long is replaced before its next
    /// use — well under `idleTimeout`, so an endpoint never closes a link its asker is writing to.
    static let linkReuseLimit: Duration = .seconds(30)

    /// Bytes queued to send on one connection, on either side. A frame that would queue more
    /// drops the connection: a peer that does not read costs at most this much memory (plus one
    /// frame, `RemoteMessageCodec.maximumFrameLength`).
    static let outgoingByteLimit = 256 * 1024

    /// A connection with bytes queued to send that the peer has read nothing of for this long is
    /// dropped. Nothing ever waits for a peer to read: writes are non-blocking and the rest is
    /// flushed by the endpoint's (or the link's) poll loop.
    static let drainTimeout: Duration = .seconds(5)

    /// Requests and lookups from one connection handed to this process's presenters and not
    /// answered yet. One more drops the connection (a legitimate asker has one per coordinating
    /// thread waiting on this process).
    static let unansweredLimit = 128

    /// Reacquirers handed out on one connection and not given back yet (`.reacquire`). One more
    /// drops the connection. Those still out when a connection closes (the asker died, or was
    /// dropped) are run then, so a presenter never stays relinquished for a gone asker.
    static let reacquirerLimit = 128

    /// How long `connect` waits for an endpoint whose listen backlog is full (a stopped process
    /// flooded with connections) before that process counts as unreachable for this request
    /// (logged when it is alive).
    static let connectTimeout: Duration = .seconds(2)

    /// Bytes read from one connection per turn of the poll loop: connections are served round
    /// robin, so one peer's stream cannot keep the others waiting for more than one chunk each.
    /// What one connection can make the receiver buffer is one unfinished frame and one chunk:
    /// `RemoteMessageCodec.headerLength + maximumFrameLength + readChunk` bytes at most.
    static let readChunk = 16 * 1024
}
