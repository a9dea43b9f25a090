import Foundation
import Glibc
import Ubiquity

// The child process's side: a watcher that prints one line per change it is told of, as soon as
// it is told. `--child store FOLDER DEVICE` watches with a KeyValueStore; `--child raw FOLDER`
// with a bare inotify watch of the folder (the floor any watcher of that folder pays).

/// Writes one whole line to standard output at once.
func sayLine(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    bytes.withUnsafeBytes { _ = write(1, $0.baseAddress, $0.count) }
}

/// Blocks until standard input ends.
func waitForEndOfInput() {
    var byte: UInt8 = 0
    while read(0, &byte, 1) > 0 {}
}

func runStoreWatcher(folder: String, device: String) {
    let store = KeyValueStore(folder: URL(fileURLWithPath: folder), deviceIdentifier: device)
    let observation = store.addChangeObserver { change in
        for key in change.changedKeys { sayLine("change \(key)") }
    }
    sayLine("ready")
    waitForEndOfInput()
    observation.cancel()
}

func runRawWatcher(folder: String) {
    let inotify = inotify_init1(Int32(IN_CLOEXEC))
    guard inotify >= 0, inotify_add_watch(inotify, folder, UInt32(IN_MOVED_TO)) >= 0 else {
        sayLine("error inotify \(errno)")
        return
    }
    Thread.detachNewThread {
        waitForEndOfInput()
        exit(0)
    }
    sayLine("ready")
    let size = 4096
    let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 8)
    while true {
        let count = read(inotify, buffer, size)
        if count <= 0 { continue }
        var offset = 0
        while offset + MemoryLayout<inotify_event>.size <= count {
            let event = buffer.load(fromByteOffset: offset, as: inotify_event.self)
            let length = Int(event.len)
            let name = String(decoding: UnsafeRawBufferPointer(start: buffer + offset + MemoryLayout<inotify_event>.size, count: length)
                .prefix(while: { $0 != 0 }), as: UTF8.self)
            if !name.hasPrefix(".") { sayLine("change \(name)") }
            offset += MemoryLayout<inotify_event>.size + length
        }
    }
}

/// A copy of this program running one of the watchers, read line by line.
final class WatcherProcess {
    let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private var buffer: [UInt8] = []

    init(_ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = ["--child"] + arguments
        process.standardInput = input
        process.standardOutput = output
        try process.run()
    }

    func readLine() -> String? {
        let descriptor = output.fileHandleForReading.fileDescriptor
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                defer { buffer.removeFirst(newline + 1) }
                return String(decoding: buffer[..<newline], as: UTF8.self)
            }
            var chunk = [UInt8](repeating: 0, count: 512)
            let count = read(descriptor, &chunk, chunk.count)
            guard count > 0 else { return nil }
            buffer += chunk[..<count]
        }
    }

    func stop() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}
