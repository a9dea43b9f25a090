import Foundation

/// The parent's command-line options (see the usage text in Soak.swift).
struct SoakOptions: Sendable {
    /// Worker processes of each kind. By default `processes` is split evenly, in the order
    /// document, appender, mover (6 → 2 + 2 + 2).
    var documents = 2
    var appenders = 2
    var movers = 2
    var seconds = 60
    /// The run folder (must be absent or empty); a new temporary one when `nil`.
    var folder: String?
    /// How long past the end a worker may take to stop before it counts as HUNG.
    var graceSeconds = 30
    /// How long a worker may take to get ready (open its documents) before it counts as HUNG.
    var startSeconds = 60
    /// The lock directory the workers use; `nil`: a private one inside the run folder.
    var lockDirectory: String?
    /// Use the library's default lock directory instead of a private one.
    var defaultLockDirectory = false
    /// The pause of a mover between two operations.
    var moverPauseMilliseconds = 20
    /// The pause of an appender between two appends (bounds how fast the files grow).
    var appenderPauseMilliseconds = 5
    /// Keep the run folder after a passing run too.
    var keep = false
    /// Seconds between progress lines during the run.
    var progressSeconds = 10

    static let maximumWorkers = 64

    var processes: Int { documents + appenders + movers }

    static let usage = """
        usage: coordination-soak [--processes N] [--seconds T] [--folder DIR]
                                 [--documents D] [--appenders A] [--movers M]
                                 [--grace S] [--start-timeout S] [--mover-pause-ms MS] [--appender-pause-ms MS]
                                 [--lock-dir DIR | --default-lock-dir] [--progress S] [--keep]
          --processes N      worker processes, split evenly: document, appender, mover (default 6, at most 64)
          --documents D      document workers (overrides the split; likewise --appenders, --movers)
          --seconds T        how long the workers run (default 60)
          --folder DIR       run folder, absent or empty (default: a new one in the temporary folder)
          --grace S          a worker still running S seconds after the stop is HUNG (default 30)
          --start-timeout S  a worker not ready after S seconds is HUNG (default 60)
          --mover-pause-ms MS  pause of a mover between two operations (default 20)
          --appender-pause-ms MS  pause of an appender between two appends (default 5; bounds the files' growth)
          --lock-dir DIR     lock directory for every worker (default: DIR/locks, private to the run)
          --default-lock-dir use the library's own lock directory (CLOUDDOCUMENTS_LOCK_DIR, /run/user/<uid>/clouddocuments, /tmp/clouddocuments-<uid>)
          --progress S       seconds between progress lines (default 10, 0 for none)
          --keep             keep the run folder after a passing run (a failing run's is always kept)
        """

    /// Parses `arguments` (without the program name). Throws a message for the user.
    static func parse(_ arguments: [String]) throws(OptionError) -> SoakOptions {
        var options = SoakOptions()
        var processes: Int?
        var documents: Int?, appenders: Int?, movers: Int?
        var index = 0
        func value(_ name: String) throws(OptionError) -> String {
            index += 1
            guard index < arguments.count else { throw OptionError("\(name) needs a value") }
            return arguments[index]
        }
        func number(_ name: String, _ range: ClosedRange<Int>) throws(OptionError) -> Int {
            let text = try value(name)
            guard let number = Int(text), range.contains(number) else {
                throw OptionError("\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound), not “\(text)”")
            }
            return number
        }
        while index < arguments.count {
            let argument = arguments[index]
            switch argument {
            case "--processes": processes = try number(argument, 1...maximumWorkers)
            case "--documents": documents = try number(argument, 0...maximumWorkers)
            case "--appenders": appenders = try number(argument, 0...maximumWorkers)
            case "--movers": movers = try number(argument, 0...maximumWorkers)
            case "--seconds": options.seconds = try number(argument, 1...86_400)
            case "--folder": options.folder = try value(argument)
            case "--grace": options.graceSeconds = try number(argument, 1...3_600)
            case "--start-timeout": options.startSeconds = try number(argument, 1...3_600)
            case "--mover-pause-ms": options.moverPauseMilliseconds = try number(argument, 0...60_000)
            case "--appender-pause-ms": options.appenderPauseMilliseconds = try number(argument, 0...60_000)
            case "--lock-dir": options.lockDirectory = try value(argument)
            case "--default-lock-dir": options.defaultLockDirectory = true
            case "--progress": options.progressSeconds = try number(argument, 0...3_600)
            case "--keep": options.keep = true
            case "-h", "--help": throw OptionError(nil)
            default: throw OptionError("unknown option “\(argument)”")
            }
            index += 1
        }
        let total = processes ?? 6
        options.documents = documents ?? (total + 2) / 3
        options.appenders = appenders ?? (total + 1) / 3
        options.movers = movers ?? total / 3
        guard options.processes >= 1, options.processes <= maximumWorkers else {
            throw OptionError("between 1 and \(maximumWorkers) workers in all, not \(options.processes)")
        }
        if let processes, processes != options.processes {
            throw OptionError("--processes \(processes) does not match --documents/--appenders/--movers (\(options.processes) in all)")
        }
        if options.lockDirectory != nil && options.defaultLockDirectory {
            throw OptionError("--lock-dir and --default-lock-dir exclude each other")
        }
        return options
    }
}

/// A command-line mistake: the message (or `nil` for `--help`), printed before the usage text.
struct OptionError: Error {
    let message: String?
    init(_ message: String?) { self.message = message }
}
