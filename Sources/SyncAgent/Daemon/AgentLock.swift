import FileCoordination
import Foundation
import Glibc
import SystemSupport

/// The running agent's claim on a root: an OFD write lock on `ROOT/.clouddocsd/agent.lock`, held
/// for the agent's lifetime and dropped by the kernel when the process ends, however it ends
/// (`kill -9` included). Only one agent serves a root; apps test the lock to learn whether one
/// runs (``AgentFolder/isAgentRunning``).
final class AgentLock: Sendable {
    /// Why the lock could not be taken.
    enum Failure: Error, CustomStringConvertible {
        case alreadyRunning(path: String)
        case system(path: String, Errno)

        var description: String {
            switch self {
            case .alreadyRunning(let path): "another clouddocsd already serves this root (it holds \(path))"
            case .system(let path, let errno): "cannot lock \(path): \(errno.message)"
            }
        }
    }

    private let descriptor: Int32

    /// Takes the lock of `folder`, creating the agent folder and its subfolders. Never waits.
    init(folder: AgentFolder) throws(Failure) {
        let path = folder.lockFile.path
        for subfolder in [folder.url, folder.statusFolder, folder.requestsFolder, folder.transfersFolder] {
            do {
                try FileManager.default.createDirectory(at: subfolder, withIntermediateDirectories: true,
                                                        attributes: [.posixPermissions: 0o700])
            } catch {
                throw .system(path: subfolder.path, Errno(EACCES))
            }
        }
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .system(path: path, .current) }
        switch OFDLock.apply(.exclusive, fd: fd, start: 0, length: 1, wait: false) {
        case .done:
            descriptor = fd
        case .wouldBlock:
            close(fd)
            throw .alreadyRunning(path: path)
        case .interrupted:
            close(fd)
            throw .system(path: path, .interrupted)
        case .failed(let code):
            close(fd)
            throw .system(path: path, Errno(code))
        }
    }

    deinit { close(descriptor) }
}
