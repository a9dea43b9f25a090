import Foundation

/// Hooks for the cross-process tests' worker (`CoordinationTestHelper`), which cannot see the
/// module's internal types: a scripted endpoint that answers like a presenter process, and a
/// one-shot asker. Not part of the API.
package enum RemoteTesting {
    /// A running scripted endpoint; `close()` stops it.
    package final class Server: Sendable {
        private let endpoint: RemoteEndpoint
        fileprivate init(_ endpoint: RemoteEndpoint) { self.endpoint = endpoint }
        package func close() { endpoint.close() }
    }

    /// The error a scripted endpoint refuses an `accommodateDeletion` with.
    package static let refusalDomain = "test.refusal"
    package static let refusalCode = 7
    package static let refusalMessage = "refused by the worker"

    /// Serves `path` as a presenter process would answer, and calls `report` (on the endpoint's
    /// thread) with `GOT <message> <presented path>` for every request and `LOOKUP <path>` for every
    /// lookup, in arrival order. Answers: a relinquishment with reacquirer 5; `saveChanges` and the
    /// subitem deletion completed without error; `accommodateDeletion` refused with
    /// `refusalDomain`/`refusalCode`/`refusalMessage`; a lookup with presenter 1 at the path.
    /// A request whose message is named `unanswered` is reported but never answered.
    package static func serve(at path: String, unanswered: String?, report: @escaping @Sendable (String) -> Void) throws -> Server {
        let endpoint = try RemoteEndpoint(path: path) { frame, reply in
            switch frame {
            case .request(let request):
                let name = Self.name(request.message)
                report("GOT \(name) \(request.presentedPath)")
                guard name != unanswered else { return }
                switch request.message.expectedAnswer {
                case .none: break
                case .relinquishment: reply.send(.answer(RemoteAnswer(id: request.id, outcome: .relinquished(reacquirer: 5))))
                case .completion:
                    let error = request.message == .accommodateDeletion
                        ? RemoteErrorDescription(domain: refusalDomain, code: Int64(refusalCode), message: refusalMessage) : nil
                    reply.send(.answer(RemoteAnswer(id: request.id, outcome: .completed(error))))
                }
            case .lookup(let lookup):
                report("LOOKUP \(lookup.path)")
                reply.send(.lookupAnswer(RemoteLookupAnswer(id: lookup.id, entries: [.init(presenterNumber: 1, path: lookup.path)])))
            case .answer, .lookupAnswer:
                report("UNEXPECTED")
            }
        }
        return Server(endpoint)
    }

    /// Connects to `path`, asks presenter 1 to relinquish to a writer and returns one line:
    /// `ANSWERED`, `GONE` (nobody listens, or the connection was closed on us), `REFUSED <uid>`,
    /// `TIMEDOUT` or `ERROR <description>`. With `checkingListener` false the asker does not
    /// check the listener's user itself (to test that the listener checks the asker's).
    package static func askOnce(at path: String, timeout: Duration, checkingListener: Bool = true) -> String {
        do throws(RemoteTransportError) {
            let link = try PeerLink(path: path, expectedUID: checkingListener ? geteuid() : nil)
            defer { link.close() }
            let id = link.makeID()
            let request = RemoteRequest(id: id, presenterNumber: 1, presentedPath: "/item", message: .relinquishToWriter)
            _ = try link.ask(.request(request), id: id, context: WaitContext(timeout: timeout, token: CancellationToken()))
            return "ANSWERED"
        } catch {
            switch error {
            case .peerGone: return "GONE"
            case .refusedPeer(let uid): return "REFUSED \(uid)"
            case .timedOut: return "TIMEDOUT"
            default: return "ERROR \(error)"
            }
        }
    }

    /// A slot of a presence table claimed for a worker; `release()` frees it.
    package final class Publication: Sendable {
        fileprivate let claim: PresenceTable.SlotClaim
        fileprivate init(_ claim: PresenceTable.SlotClaim) { self.claim = claim }
        /// The slot number.
        package var slot: Int { claim.slot }
        package func release() { claim.release() }
    }

    /// Claims a slot of the presence table file at `tablePath` and publishes `paths` in it; nil
    /// when the table cannot be mapped or every slot is held.
    package static func publish(tablePath: String, paths: [String]) -> Publication? {
        guard let table = PresenceTable.open(tablePath), let claim = PresenceTable.SlotClaim.claim(in: table) else { return nil }
        for path in paths { claim.add(path) }
        return Publication(claim)
    }

    /// The `FilePresenter` method a message stands for, as the reports name it.
    static func name(_ message: PresenterMessage) -> String {
        switch message {
        case .relinquishToReader: return "relinquishToReader"
        case .relinquishToWriter: return "relinquishToWriter"
        case .reacquire: return "reacquire"
        case .saveChanges: return "saveChanges"
        case .accommodateDeletion: return "accommodateDeletion"
        case .accommodateEviction: return "accommodateEviction"
        case .accommodateSubitemDeletion: return "accommodateSubitemDeletion"
        case .itemDidChange: return "itemDidChange"
        case .itemDidMove: return "itemDidMove"
        case .subitemDidAppear: return "subitemDidAppear"
        case .subitemDidChange: return "subitemDidChange"
        case .subitemDidMove: return "subitemDidMove"
        case .versionDidGain: return "versionDidGain"
        case .versionDidLose: return "versionDidLose"
        case .versionDidResolveConflict: return "versionDidResolveConflict"
        }
    }
}
