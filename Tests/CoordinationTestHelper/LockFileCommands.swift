// Worker commands for the lock-file tests (descriptor bound, reclaiming). Dispatched from main.swift.
//
//   many-files <dir> <count> <nofile-limit>   lower RLIMIT_NOFILE, coordinate <count> distinct new
//                                             files, print "OK <open descriptors>"
//   race <dir> <items> <iterations> <tag>     coordinated writes of <dir>/item-N that log "B tag i" and
//                                             "E tag i" to <dir>/log-N inside the lock, and delete the
//                                             item every other time; print "DONE"
//   churn <dir> <count>                       coordinate <count> new files, delete them (coordinated),
//                                             print "ALL DELETED", then wait for stdin to close
import FileCoordination
import Foundation
import Glibc

func runLockFileCommand(_ command: String, _ arguments: [String]) throws {
    switch command {
    case "many-files":
        let directory = arguments[0]
        let count = Int(arguments[1]) ?? 0
        var limit = rlimit(rlim_cur: rlim_t(Int(arguments[2]) ?? 256), rlim_max: rlim_t(Int(arguments[2]) ?? 256))
        guard setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { say("ERROR setrlimit \(errno)"); return }
        for index in 0..<count {
            let url = URL(fileURLWithPath: directory + "/f-\(index)")
            try Coordinator().coordinate(writingItemAt: url) { url in
                try Data("x".utf8).write(to: url)
            }
        }
        // Coordination still works, and an ordinary open still succeeds.
        let again = URL(fileURLWithPath: directory + "/f-0")
        _ = try Coordinator().coordinate(readingItemAt: again) { try Data(contentsOf: $0) }
        say("OK \(openDescriptorCount())")
    case "race":
        let directory = arguments[0]
        let items = Int(arguments[1]) ?? 1
        let iterations = Int(arguments[2]) ?? 0
        let tag = arguments[3]
        for iteration in 0..<iterations {
            let index = iteration % items
            let item = URL(fileURLWithPath: directory + "/item-\(index)")
            let deleting = iteration % 2 == 1
            try Coordinator().coordinate(writingItemAt: item, options: deleting ? .forDeleting : []) { url in
                try appendLine("B \(tag) \(iteration)", to: directory + "/log-\(index)")
                if deleting {
                    unlink(url.path)
                } else {
                    try Data("\(tag) \(iteration)".utf8).write(to: url)
                }
                try appendLine("E \(tag) \(iteration)", to: directory + "/log-\(index)")
            }
        }
        say("DONE")
    case "churn":
        let directory = arguments[0]
        let count = Int(arguments[1]) ?? 0
        for index in 0..<count {
            try Coordinator().coordinate(writingItemAt: URL(fileURLWithPath: directory + "/f-\(index)")) { url in
                try appendLine("x", to: url.path)
            }
            if index % 1000 == 999 { say("CREATED \(index + 1)") }
        }
        for index in 0..<count {
            _ = try Coordinator().coordinate(writingItemAt: URL(fileURLWithPath: directory + "/f-\(index)"),
                                         options: .forDeleting) { url in
                _ = unlink(url.path)
            }
            if index % 1000 == 999 { say("DELETED \(index + 1) of \(count)") }
        }
        say("ALL DELETED")
        while readLine() != nil {}
    default:
        say("unknown command \(command)")
        exit(2)
    }
}

/// Appends one line with a single `write` on an `O_APPEND` descriptor.
private func appendLine(_ line: String, to path: String) throws {
    let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
    guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    defer { close(fd) }
    let bytes = Array((line + "\n").utf8)
    let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    guard written == bytes.count else { throw POSIXError(.EIO) }
}

private func openDescriptorCount() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
}
