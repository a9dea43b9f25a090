import Foundation
import Glibc
import SystemSupport

/// The commands `clouddocs agent …` leaves in `ROOT/.clouddocsd/requests/` (``AgentRequest``),
/// read and removed by the agent. A file that is not a request (garbled, too big, a stray
/// temporary) is removed and ignored: whoever can write the folder is the same user, and a bad
/// file must never stop the agent.
struct RequestInbox: Sendable {
    let folder: AgentFolder

    /// The largest request file read.
    static let maximumRequestSize = 4096

    /// Takes every waiting request, oldest first, removing its file.
    func take() -> [AgentRequest] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.requestsFolder.path) else { return [] }
        var requests: [(Date, AgentRequest)] = []
        for name in names where name.hasSuffix(".request") && !name.hasPrefix(".") {
            let url = folder.requestsFolder.appending(path: name)
            let attributes = try? FileManager.default.attributesOfItem(atPath: url.path)
            let date = attributes?[.modificationDate] as? Date ?? .distantPast
            // Never blocks (a FIFO is skipped) and never reads more than the limit plus one byte.
            let data = readSmallRegularFile(atPath: url.path, limit: Self.maximumRequestSize)
            unlink(url.path)
            if let data, let request = try? JSONDecoder.agent.decode(AgentRequest.self, from: data) {
                requests.append((date, request))
            }
        }
        return requests.sorted { $0.0 < $1.0 }.map(\.1)
    }
}
