import Foundation
import Ubiquity

/// `containers`, `move-to-cloud`, `move-to-local`, `rm`, `evict`, `download`, `status`, `conflicts`:
/// the container recipes of Apple's iCloud guides, over `UbiquityAccount.shared`.
///
/// Output (one record per line, fields separated by tabs, for scripts):
/// - `containers`: `IDENTIFIER  FOLDER  PROVIDER`, first (default) container first;
/// - `move-to-cloud`, `move-to-local`: the item's new path;
/// - `rm`: nothing;
/// - `status`: `key: value` lines (`ubiquitous`, `container`, `provider`, `downloading-status`,
///   `downloaded`, `downloading`, `uploaded`, `uploading`, `percent-downloaded`,
///   `percent-uploaded`, `unresolved-conflicts`) for an item in a container; only
///   `ubiquitous: false` for one outside every container;
/// - `conflicts`: `PATH  MODIFIED (ISO 8601)  SAVED-BY` per unresolved conflict version, oldest
///   first; nothing when there are none.
/// Errors go to standard error as one line; exit status 1.
enum ContainerCommands {
    static let usageEntries: [UsageEntry] = [
        UsageEntry("containers", "containers", "list the configured containers: identifier, folder, provider"),
        UsageEntry("move-to-cloud", "move-to-cloud <file> [--container ID]",
                   "move <file> into the container's Documents folder (coordinated)"),
        UsageEntry("move-to-local", "move-to-local <file> <dest>", "move <file> out of the cloud to <dest> (a folder keeps the name)"),
        UsageEntry("rm", "rm <file>", "delete a document (local or in the cloud) in a coordinated write:",
                   "open documents and presenters are told first"),
        UsageEntry("evict", "evict <item>", "drop the local copy of a file, a package, or each synced file",
                   "in a folder (providers with placeholders only)"),
        UsageEntry("download", "download <item>", "start downloading an evicted file or package, or each evicted",
                   "item in a folder (providers with placeholders only)"),
        UsageEntry("status", "status <file>", "the item's cloud status, one `key: value` per line"),
        UsageEntry("conflicts", "conflicts <file>", "the item's unresolved conflict versions, one per line"),
    ]

    static func run(_ command: String, _ arguments: [String]) async throws -> Int32? {
        let account = UbiquityAccount.shared
        switch command {
        case "containers":
            try expectArguments(arguments, count: 0, command)
            guard try account.configuration().root != nil else { throw UbiquityError.notSignedIn }
            for container in account.configuredContainers() {
                printLine("\(container.identifier)\t\(container.url.path)\t\(account.provider(for: container).name)")
            }
        case "move-to-cloud":
            let (file, container) = try moveToCloudArguments(arguments)
            let documents = try account.container(identifier: container).documentsURL
            let destination = documents.appending(path: file.lastPathComponent, directoryHint: .notDirectory)
            try await account.setUbiquitous(true, itemAt: file, destinationURL: destination)
            printLine(destination.path)
        case "move-to-local":
            try expectArguments(arguments, count: 2, command)
            let file = URL(fileURLWithPath: arguments[0])
            var destination = URL(fileURLWithPath: arguments[1])
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: destination.path, isDirectory: &isFolder), isFolder.boolValue {
                destination = destination.appending(path: file.lastPathComponent, directoryHint: .notDirectory)
            }
            try await account.setUbiquitous(false, itemAt: file, destinationURL: destination)
            printLine(destination.path)
        case "rm":
            try expectArguments(arguments, count: 1, command)
            try await account.removeItem(at: URL(fileURLWithPath: arguments[0]))
        case "evict":
            try expectArguments(arguments, count: 1, command)
            try account.evictUbiquitousItem(at: URL(fileURLWithPath: arguments[0]))
        case "download":
            try expectArguments(arguments, count: 1, command)
            let url = URL(fileURLWithPath: arguments[0]).standardizedFileURL
            // A folder is here already: the agent is asked for the evicted items inside it.
            if OnDemandCommands.isPlainFolder(url) {
                try await OnDemandCommands.send(.download, itemAt: url)
            } else {
                try account.startDownloadingUbiquitousItem(at: url)
            }
        case "status":
            try expectArguments(arguments, count: 1, command)
            try printStatus(of: URL(fileURLWithPath: arguments[0]), account: account)
        case "conflicts":
            try expectArguments(arguments, count: 1, command)
            let dates = ISO8601DateFormatter()
            for version in try FileVersion.unresolvedConflictVersionsOfItem(at: URL(fileURLWithPath: arguments[0])) {
                let modified = version.modificationDate.map { dates.string(from: $0) } ?? "-"
                printLine("\(version.url.path)\t\(modified)\t\(version.localizedNameOfSavingComputer ?? "-")")
            }
        default:
            return nil
        }
        return 0
    }

    private static func expectArguments(_ arguments: [String], count: Int, _ command: String) throws {
        guard arguments.count == count else {
            throw CommandLineUsageError("\(command) takes \(count) argument\(count == 1 ? "" : "s"), not \(arguments.count)", command: command)
        }
    }

    /// `<file> [--container ID]`, in either order.
    private static func moveToCloudArguments(_ arguments: [String]) throws -> (URL, String?) {
        var file: URL?, container: String?
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            if argument == "--container" {
                guard let identifier = rest.popFirst() else { throw CommandLineUsageError("--container needs an identifier", command: "move-to-cloud") }
                container = identifier
            } else if file == nil {
                file = URL(fileURLWithPath: argument)
            } else {
                throw CommandLineUsageError("move-to-cloud takes one file, then optionally --container ID", command: "move-to-cloud")
            }
        }
        guard let file else { throw CommandLineUsageError("move-to-cloud needs a file", command: "move-to-cloud") }
        return (file, container)
    }

    private static func printStatus(of url: URL, account: UbiquityAccount) throws {
        // An evicted item (only its placeholder here) has a status too: not downloaded.
        guard FileManager.default.fileExists(atPath: url.path) || account.isUbiquitousItem(at: url) else {
            throw UbiquityError.itemNotFound(path: url.path)
        }
        guard let container = account.containerOfItem(at: url) else {
            // Outside every container there is no cloud status to report, only that.
            printLine("ubiquitous: false")
            return
        }
        let status = account.status(ofItemAt: url)
        func percent(_ value: Double?) -> String { value.map { String(format: "%.0f", $0) } ?? "unknown" }
        let lines: [(String, String)] = [
            ("ubiquitous", "\(status.isUbiquitous)"),
            ("container", container.identifier),
            ("provider", account.provider(for: container).name),
            ("downloading-status", "\(status.downloadingStatus)"),
            ("downloaded", "\(status.isDownloaded)"),
            ("downloading", "\(status.isDownloading)"),
            ("uploaded", "\(status.isUploaded)"),
            ("uploading", "\(status.isUploading)"),
            ("percent-downloaded", percent(status.percentDownloaded)),
            ("percent-uploaded", percent(status.percentUploaded)),
            ("unresolved-conflicts", "\(status.hasUnresolvedConflicts)"),
        ]
        for (key, value) in lines { printLine("\(key): \(value)") }
    }
}
