import FileCoordination
import Foundation
import SystemSupport
import Glibc
import Synchronization

/// A worker's record of what it did, one line per record, appended with one `write` each to a
/// file opened `O_APPEND` (so a record is in the file the moment the call returns, whatever
/// happens to the process afterwards) and `fsync`ed every second and at the end. The parent reads
/// it after the run, also for a worker that hung or crashed. Records (fields separated by tabs):
///
///     A <line> <path>       an append confirmed: appender — its coordinated write returned;
///                           document — the line was seen in a coordinated read after its save
///     S <line> <path>       document: a save that included the line returned successfully
///     E <kind> <message>    an error (kind: timeout, error, move-race); the first ones only
///     K <kind> <count>      how many errors of that kind so far (written every second)
///     F <count>             a new maximum of open file descriptors
///     L <nanoseconds>       document: the duration of one coordinated read
///     N <name> <count>      a counter (written every second and at the end)
///     U <message>           an anomaly that fails the run (a document that lost its file, …)
///     X                     the worker stopped cleanly
final class WorkerLog: Sendable {
    private let descriptor: Int32
    private let state = Locked(State())
    /// Error messages written in full, per kind of error; later errors of that kind are only
    /// counted. Per kind, so thousands of counted move races never hide the one real error.
    static let messageLimit = 200

    private struct State {
        var errorCounts: [String: Int] = [:]
        var counters: [String: Int] = [:]
        var messagesWritten: [String: Int] = [:]
        var maximumDescriptors = 0
        /// What the last flush wrote, so an unchanged count is not written again.
        var flushedErrors: [String: Int] = [:]
        var flushedCounters: [String: Int] = [:]
    }

    init(_ url: URL) throws {
        descriptor = open(url.path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw SoakError("cannot open the log \(url.path): \(Errno.current.message)") }
    }

    private func write(_ fields: String...) {
        let line = fields.map(Self.clean).joined(separator: "\t") + "\n"
        let bytes = Array(line.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, bytes.count - offset) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            offset += written
        }
    }

    private static func clean(_ field: String) -> String {
        field.contains(where: { $0 == "\t" || $0 == "\n" || $0 == "\r" })
            ? String(field.map { $0 == "\t" || $0 == "\n" || $0 == "\r" ? " " : $0 }) : field
    }

    func confirmed(_ line: String, in url: URL) { write("A", line, url.path) }
    func saved(_ line: String, to url: URL) { write("S", line, url.path) }
    func readDuration(nanoseconds: UInt64) { write("L", String(nanoseconds)) }
    func anomaly(_ message: String) { write("U", message) }

    func error(_ kind: ErrorKind, _ message: String) {
        let full = state.withLock { state -> Bool in
            state.errorCounts[kind.rawValue, default: 0] += 1
            state.messagesWritten[kind.rawValue, default: 0] += 1
            return state.messagesWritten[kind.rawValue, default: 0] <= Self.messageLimit
        }
        if full { write("E", kind.rawValue, message) }
    }

    func count(_ name: String, by amount: Int = 1) {
        state.withLock { $0.counters[name, default: 0] += amount }
    }

    /// Records `count` open descriptors if it is a new maximum.
    func descriptors(_ count: Int) {
        let isNew = state.withLock { state -> Bool in
            guard count > state.maximumDescriptors else { return false }
            state.maximumDescriptors = count
            return true
        }
        if isNew { write("F", String(count)) }
    }

    /// Writes the error counts and counters that changed since the last flush, then `fsync`s.
    func flush() {
        let (errors, counters) = state.withLock { state -> ([String: Int], [String: Int]) in
            let errors = state.errorCounts.filter { state.flushedErrors[$0.key] != $0.value }
            let counters = state.counters.filter { state.flushedCounters[$0.key] != $0.value }
            state.flushedErrors = state.errorCounts
            state.flushedCounters = state.counters
            return (errors, counters)
        }
        for (kind, count) in errors.sorted(by: { $0.key < $1.key }) { write("K", kind, String(count)) }
        for (name, count) in counters.sorted(by: { $0.key < $1.key }) { write("N", name, String(count)) }
        fsync(descriptor)
    }

    func finished() {
        flush()
        write("X")
        fsync(descriptor)
    }
}

/// How a worker classifies a failed operation.
enum ErrorKind: String, Sendable, CaseIterable {
    /// ``CoordinationError/timedOut`` (the workers set no timeout, so any is the library's own).
    case timeout
    /// Any other failure.
    case error
    /// A read or save of a document's old place that failed because a mover had just moved the
    /// folder (the document follows when the move message arrives), or a read another process's
    /// document refused because its save met that. Counted, not a failure.
    case moveRace = "move-race"
}

/// What the parent reads back from one worker's log.
struct WorkerRecords: Sendable {
    var confirmed: [String] = []
    var saved: [String] = []
    /// Where each confirmed or saved line was written (the path of the last record of it).
    var places: [String: String] = [:]
    var errorCounts: [ErrorKind: Int] = [:]
    var errorMessages: [(ErrorKind, String)] = []
    var maximumDescriptors = 0
    var readDurations: [UInt64] = []
    var counters: [String: Int] = [:]
    var anomalies: [String] = []
    var finished = false

    /// How many appends the log confirms so far (for the progress lines).
    static func confirmedCount(_ url: URL) -> Int {
        guard let data = FileManager.default.contents(atPath: url.path) else { return 0 }
        var count = 0
        var atLineStart = true
        var previousWasA = false
        for byte in data {
            if previousWasA && byte == UInt8(ascii: "\t") { count += 1 }
            previousWasA = atLineStart && byte == UInt8(ascii: "A")
            atLineStart = byte == UInt8(ascii: "\n")
        }
        return count
    }

    init(_ url: URL) {
        guard let data = FileManager.default.contents(atPath: url.path) else { return }
        var loggedErrors: [ErrorKind: Int] = [:]
        var reportedErrors: [ErrorKind: Int] = [:]
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            switch fields[0] {
            case "A" where fields.count >= 2:
                confirmed.append(fields[1])
                if fields.count >= 3 { places[fields[1]] = fields[2] }
            case "S" where fields.count >= 2:
                saved.append(fields[1])
                if fields.count >= 3 { places[fields[1]] = fields[2] }
            case "E" where fields.count >= 3:
                if let kind = ErrorKind(rawValue: fields[1]) {
                    loggedErrors[kind, default: 0] += 1
                    errorMessages.append((kind, fields[2]))
                }
            case "K" where fields.count >= 3:
                if let kind = ErrorKind(rawValue: fields[1]), let count = Int(fields[2]) { reportedErrors[kind] = count }
            case "F" where fields.count >= 2: maximumDescriptors = max(maximumDescriptors, Int(fields[1]) ?? 0)
            case "L" where fields.count >= 2: if let value = UInt64(fields[1]) { readDurations.append(value) }
            case "N" where fields.count >= 3: counters[fields[1]] = Int(fields[2]) ?? 0
            case "U" where fields.count >= 2: anomalies.append(fields[1])
            case "X": finished = true
            default: break
            }
        }
        for kind in ErrorKind.allCases {
            let count = max(loggedErrors[kind] ?? 0, reportedErrors[kind] ?? 0)
            if count > 0 { errorCounts[kind] = count }
        }
    }
}
