import Foundation

/// What a worker process does.
enum WorkerRole: String, Sendable, CaseIterable {
    case document, appender, mover
}

/// Where everything of one run lives, inside the run folder:
///
///     files/shared-0.txt, files/shared-1.txt      shared: documents and appenders append to them
///     files/sub/shared-2.txt, …/shared-3.txt      shared, in the folder the movers move to
///                                                 files/sub.moved and back (documents follow)
///     files/sub/mover-<w>.txt                     the mover's own file, moved to mover-<w>.moved.txt and back
///     files/scratch-<w>.txt                       the mover's scratch file: renamed, unlinked, recreated
///                                                 without coordination
///     logs/worker-<w>.log, .stderr                each worker's records and standard error
///     locks/                                      the private lock directory (unless chosen otherwise)
///     versions/                                   the version store (conflict versions)
///
/// Only documents and appenders write the shared files, and only movers touch their own and
/// scratch files, so a line missing from the shared files is lost, whatever the movers did.
struct RunLayout: Sendable {
    let root: URL

    var files: URL { root.appendingPathComponent("files", isDirectory: true) }
    var logs: URL { root.appendingPathComponent("logs", isDirectory: true) }
    var locks: URL { root.appendingPathComponent("locks", isDirectory: true) }
    var versions: URL { root.appendingPathComponent("versions", isDirectory: true) }

    /// The two names of the folder the movers move back and forth.
    static let movingFolderNames = ["sub", "sub.moved"]
    /// How many shared files there are; the first `sharedAtTop` are at the top of `files`.
    static let sharedCount = 4
    static let sharedAtTop = 2

    var movingFolders: [URL] { Self.movingFolderNames.map { files.appendingPathComponent($0, isDirectory: true) } }

    static func sharedName(_ index: Int) -> String { "shared-\(index).txt" }

    /// The places shared file `index` can be: one at the top, two in the moving folder.
    func sharedCandidates(_ index: Int) -> [URL] {
        let name = Self.sharedName(index)
        if index < Self.sharedAtTop { return [files.appendingPathComponent(name)] }
        return movingFolders.map { $0.appendingPathComponent(name) }
    }

    /// Where shared file `index` is now (the first candidate that exists), or `nil`.
    func currentShared(_ index: Int) -> URL? {
        sharedCandidates(index).first { FileManager.default.fileExists(atPath: $0.path) }
    }

    /// The two names of mover `worker`'s own file (inside the moving folder, wherever it is).
    static func moverFileNames(_ worker: Int) -> [String] { ["mover-\(worker).txt", "mover-\(worker).moved.txt"] }
    /// The two names of mover `worker`'s scratch file (at the top).
    func scratch(_ worker: Int) -> (URL, URL) {
        (files.appendingPathComponent("scratch-\(worker).txt"), files.appendingPathComponent("scratch-\(worker).renamed"))
    }

    func log(_ worker: Int) -> URL { logs.appendingPathComponent("worker-\(worker).log") }
    func standardError(_ worker: Int) -> URL { logs.appendingPathComponent("worker-\(worker).stderr") }

    /// Makes the folders and the empty shared files (the moving folder as `sub`).
    func create(privateLocks: Bool) throws {
        let manager = FileManager.default
        for folder in [files, logs, versions, movingFolders[0]] {
            try manager.createDirectory(at: folder, withIntermediateDirectories: true,
                                        attributes: [.posixPermissions: 0o700])
        }
        if privateLocks {
            try manager.createDirectory(at: locks, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        for index in 0..<Self.sharedCount {
            guard manager.createFile(atPath: sharedCandidates(index)[0].path, contents: Data()) else {
                throw SoakError("cannot create \(sharedCandidates(index)[0].path)")
            }
        }
    }
}

/// The lines workers append: `D<worker>-<sequence>` (documents) and `A<worker>-<sequence>`
/// (appenders), each followed by a line feed. Unique in the whole run.
enum SoakLine {
    static func make(_ role: WorkerRole, worker: Int, sequence: Int) -> String {
        (role == .document ? "D" : "A") + "\(worker)-\(sequence)"
    }

    /// Whether `line` (without its line feed) is one a worker could have written whole.
    static func isWellFormed(_ line: Substring) -> Bool {
        let bytes = line.utf8
        guard let first = bytes.first, first == UInt8(ascii: "D") || first == UInt8(ascii: "A") else { return false }
        var sawDash = false, digitsBefore = 0, digitsAfter = 0
        for byte in bytes.dropFirst() {
            if byte == UInt8(ascii: "-") {
                if sawDash { return false }
                sawDash = true
            } else if byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") {
                if sawDash { digitsAfter += 1 } else { digitsBefore += 1 }
            } else {
                return false
            }
        }
        return sawDash && digitsBefore > 0 && digitsAfter > 0
    }
}

/// A failure of the soak program itself (not of what it tests).
struct SoakError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
