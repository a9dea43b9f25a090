import Foundation
import Glibc
import SystemSupport
import BenchmarkSupport
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
        for event in InotifyEvent.decode(buffer, count: count) where !event.name.isEmpty && !event.name.hasPrefix(".") {
            sayLine("change \(event.name)")
        }
    }
}
