import Foundation
import Ubiquity

/// `ls`: a live metadata query of a container's documents (or data), printed as it changes.
///
/// Output, one line each, written at once (unbuffered) so another program can follow it:
///
///     = Notes/todo.txt                 an initial result (path relative to the scope's folder)
///     # gathered 12                    the initial results are complete
///     + Notes/new.txt                  added
///     ~ Notes/renamed.txt (was Notes/new.txt)   changed (renamed or moved: the old path too)
///     - Notes/renamed.txt              removed
///
/// A result with conflict copies beside it ends with ` [conflict]`. Stops on Ctrl-C, at the end
/// of standard input, or after `--until-count N` change lines.
enum QueryCommands {
    static let usageEntries: [UsageEntry] = [
        UsageEntry("ls", "ls [--container ID] [--data] [--until-count N] [PATTERN]",
                   "list the container's documents (PATTERN: a LIKE pattern on",
                   "the file name, e.g. '*.txt'; --data: the data scope), then",
                   "print additions (+), changes (~) and removals (-) as they",
                   "happen, until Ctrl-C, end of input or N change lines"),
    ]

    struct Options {
        var container: String?
        var dataScope = false
        var untilCount: Int?
        var pattern: String?

        init(_ arguments: [String]) throws {
            var rest = arguments[...]
            while let argument = rest.popFirst() {
                switch argument {
                case "--container":
                    guard let value = rest.popFirst() else { throw CommandLineUsageError("--container needs an identifier", command: "ls") }
                    container = value
                case "--data":
                    dataScope = true
                case "--until-count":
                    guard let value = rest.popFirst().flatMap(Int.init), value >= 0 else {
                        throw CommandLineUsageError("--until-count needs a number", command: "ls")
                    }
                    untilCount = value
                default:
                    guard !argument.hasPrefix("--"), pattern == nil else { throw CommandLineUsageError("unexpected argument “\(argument)”", command: "ls") }
                    pattern = argument
                }
            }
        }
    }

    static func run(_ command: String, _ arguments: [String]) async throws -> Int32? {
        guard command == "ls" else { return nil }
        let options = try Options(arguments)
        try await list(options)
        return 0
    }

    private static func list(_ options: Options) async throws {
        // The scope is one container's: an account that knows only it.
        let shared = UbiquityAccount.shared
        var configuration = try shared.configuration()
        let container = try shared.container(identifier: options.container)
        configuration.containerIdentifiers = [container.identifier]
        let account = UbiquityAccount(configuration: configuration)
        let base = PathBytesDisplay.path(options.dataScope ? container.url : container.documentsURL)
        let predicate = try options.pattern.map {
            try MetadataItemPredicate(format: "%K LIKE %@", MetadataItemAttribute.fsName.rawValue, $0)
        } ?? .all
        let stop = StopSignal()
        let printer = ChangePrinter(base: base, untilCount: options.untilCount, stop: stop)
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let query = MetadataQuery(scopes: [options.dataScope ? .ubiquitousData : .ubiquitousDocuments], predicate: predicate,
                                  sortKeys: [MetadataQuerySortKey(.path)], notificationBatchingInterval: 0,
                                  operationQueue: queue, account: account) { event in
            printer.handle(event, results: nil)
        }
        printer.query = query
        stop.watchInterruptAndEndOfInput()
        try query.start()
        await stop.wait()
        query.stop()
        // The queue is serial: an operation added now runs after every delivery already queued.
        await withCheckedContinuation { continuation in queue.addOperation { continuation.resume() } }
        if let problem = query.liveUpdateProblem {
            FileHandle.standardError.write(Data("clouddocs: warning: \(problem)\n".utf8))
        }
    }
}

/// Prints a query's events as lines (on the query's queue, one event at a time).
private final class ChangePrinter: @unchecked Sendable {
    // @unchecked: `paths`, `printed` and `query` are used only on the query's serial queue (after
    // `query` is set, before the query starts).
    let base: String
    let untilCount: Int?
    let stop: StopSignal
    var query: MetadataQuery?
    private var paths: [UInt64: String] = [:]
    private var printed = 0

    init(base: String, untilCount: Int?, stop: StopSignal) {
        self.base = base
        self.untilCount = untilCount
        self.stop = stop
    }

    func handle(_ event: MetadataQueryEvent, results: [MetadataItem]?) {
        switch event {
        case .didFinishGathering:
            let results = query?.results ?? []
            for item in results {
                paths[item.id] = relative(item)
                printLine("= \(describe(item))")
            }
            printLine("# gathered \(results.count)")
            if untilCount == 0 { stop.signal() }
        case .didUpdate(let update):
            for item in update.added { paths[item.id] = relative(item); emit("+ \(describe(item))") }
            for item in update.changed {
                let old = paths[item.id]
                paths[item.id] = relative(item)
                let moved = old.flatMap { $0 == relative(item) ? nil : " (was \($0))" } ?? ""
                emit("~ \(describe(item))" + moved)
            }
            for item in update.removed { paths.removeValue(forKey: item.id); emit("- \(describe(item))") }
        default:
            break
        }
    }

    private func emit(_ line: String) {
        guard untilCount.map({ printed < $0 }) ?? true else { return }
        printLine(line)
        printed += 1
        if let untilCount, printed >= untilCount { stop.signal() }
    }

    private func relative(_ item: MetadataItem) -> String {
        let path = PathBytesDisplay.path(item.url)
        return path.hasPrefix(base + "/") ? String(path.dropFirst(base.count + 1)) : path
    }

    private func describe(_ item: MetadataItem) -> String {
        relative(item) + (item.isFolder ? "/" : "") + (item.hasUnresolvedConflicts ? " [conflict]" : "")
    }
}

/// Paths for display (the URL's path, standardized, without a trailing slash).
private enum PathBytesDisplay {
    static func path(_ url: URL) -> String {
        var path = url.standardizedFileURL.resolvingSymlinksInPath().path
        while path.count > 1, path.hasSuffix("/") { path.removeLast() }
        return path
    }
}

/// The first of Ctrl-C, the end of standard input, or `signal()` ends the wait.
private final class StopSignal: @unchecked Sendable {
    // @unchecked: `stopped` and `continuation` are guarded by `lock`.
    private let lock = NSLock()
    private var stopped = false
    private var continuation: CheckedContinuation<Void, Never>?
    private var interruptSource: (any DispatchSourceSignal)?

    func signal() {
        lock.lock()
        stopped = true
        let waiting = continuation
        continuation = nil
        lock.unlock()
        waiting?.resume()
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            lock.lock()
            if stopped {
                lock.unlock()
                continuation.resume()
            } else {
                self.continuation = continuation
                lock.unlock()
            }
        }
    }

    func watchInterruptAndEndOfInput() {
        Glibc.signal(SIGINT, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        source.setEventHandler { [self] in signal() }
        source.resume()
        lock.lock(); interruptSource = source; lock.unlock()
        let thread = Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 512)
            while true {
                let count = read(0, &buffer, buffer.count)
                if count == 0 || (count < 0 && errno != EINTR) { break }
            }
            signal()
        }
        thread.name = "clouddocs.stdin"
        thread.start()
    }
}
