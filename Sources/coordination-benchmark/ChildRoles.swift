import BenchmarkSupport
import FileCoordination
import Foundation
import Glibc

/// What a child copy of the benchmark does when started with `--child ROLE ...`.
enum ChildRole {
    static func run(_ arguments: [String]) -> Never {
        let role = arguments[0]
        let path = arguments[1]
        let url = URL(fileURLWithPath: path)
        switch role {
        case "loop-read":
            // Coordinated reads until stdin closes.
            Thread {
                var buffer = [UInt8](repeating: 0, count: 4096)
                while true {
                    do {
                        try Coordinator().coordinate(readingItemAt: url) { url in
                            buffer.withUnsafeMutableBytes { _ = Raw.readFile(url.path, into: $0) }
                        }
                    } catch {
                        benchmarkFailed("loop-read: \(error.localizedDescription)")
                    }
                }
            }.start()
            say("READY")
            while readLine() != nil {}
            exit(0)
        case "loop-read-raw":
            let fd = open(path + ".rawlock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
            guard fd >= 0 else { benchmarkFailed("loop-read-raw: open: errno \(errno)") }
            Thread {
                var buffer = [UInt8](repeating: 0, count: 4096)
                while true {
                    flock(fd, LOCK_SH)
                    buffer.withUnsafeMutableBytes { _ = Raw.readFile(path, into: $0) }
                    flock(fd, LOCK_UN)
                }
            }.start()
            say("READY")
            while readLine() != nil {}
            exit(0)
        case "present":
            // Presenters in this process, for the other process's coordinations: of `path` itself
            // (count 1), or of `count` other files in the folder `path`.
            let count = Int(arguments[2]) ?? 1
            let urls = count == 1 ? [url] : (0..<count).map { url.appendingPathComponent("remote-other-\($0).txt") }
            let presenters = urls.map(ChildPresenter.init)
            presenters.forEach(Coordinator.addFilePresenter)
            say("READY")
            while readLine() != nil {}
            presenters.forEach(Coordinator.removeFilePresenter)
            exit(0)
        case "handoff", "handoff-fresh", "handoff-raw":
            let me = Int(arguments[2]) ?? 0
            let turns = Int(arguments[3]) ?? 1000
            say("READY")
            _ = readLine()
            Handoff.run(path: path, me: me, turns: turns, mode: role)
            say("DONE")
            exit(0)
        default:
            exit(2)
        }
    }

    static func say(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        bytes.withUnsafeBytes { _ = write(1, $0.baseAddress, $0.count) }
    }
}

/// A presenter that answers every message with the protocol's defaults.
final class ChildPresenter: FilePresenter {
    let presentedItemURL: URL?
    let presentedItemOperationQueue: OperationQueue
    init(_ url: URL) {
        presentedItemURL = url
        presentedItemOperationQueue = OperationQueue()
        presentedItemOperationQueue.maxConcurrentOperationCount = 1
    }
}

/// Two processes take turns on a counter file: each loops taking the write lock, and increments
/// the counter only when it is its turn (counter % 2 == me). Every increment is one handoff.
enum Handoff {
    /// `mode`: "handoff" reuses one coordinator, "handoff-fresh" makes one per write (Apple's
    /// advice), "handoff-raw" uses `flock`.
    static func run(path: String, me: Int, turns: Int, mode: String) {
        let url = URL(fileURLWithPath: path)
        let lockFD = open(path + ".rawlock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        let dataFD = open(path, O_RDWR | O_CLOEXEC)
        guard lockFD >= 0, dataFD >= 0 else { benchmarkFailed("handoff: open \(path): errno \(errno)") }
        var done = 0
        let coordinator = Coordinator()
        func step() {
            var value: Int64 = 0
            guard withUnsafeMutableBytes(of: &value, { pread(dataFD, $0.baseAddress, 8, 0) }) == 8 else {
                benchmarkFailed("handoff: pread: errno \(errno)")
            }
            if Int(value) % 2 == me {
                value += 1
                guard withUnsafeBytes(of: &value, { pwrite(dataFD, $0.baseAddress, 8, 0) }) == 8 else {
                    benchmarkFailed("handoff: pwrite: errno \(errno)")
                }
                done += 1
            }
        }
        while done < turns {
            switch mode {
            case "handoff", "handoff-fresh":
                do {
                    try (mode == "handoff" ? coordinator : Coordinator()).coordinate(writingItemAt: url) { _ in step() }
                } catch {
                    benchmarkFailed("\(mode): \(error.localizedDescription)")
                }
            default:
                guard flock(lockFD, LOCK_EX) == 0 else { benchmarkFailed("raw handoff: flock: errno \(errno)") }
                step()
                flock(lockFD, LOCK_UN)
            }
        }
    }
}
