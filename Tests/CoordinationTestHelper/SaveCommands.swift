// Save commands of the test helper (see main.swift for the conventions).
//
//   save-and-wait <file|package> <path>   start a SafeSave of 2 MiB (a file, or a package of two
//                                         1 MiB files) to <path>; after the first MiB is written,
//                                         print "WRITING" and wait for a line on stdin; then finish
//                                         and print "SAVED" (the parent may SIGKILL it instead)
import CloudDocuments
import Foundation

/// Runs `save-and-wait`; `arguments` are the words after the command.
func runSaveAndWait(_ arguments: [String]) throws {
    guard arguments.count == 2 else {
        printLine("usage: save-and-wait <file|package> <path>")
        exit(2)
    }
    let url = URL(fileURLWithPath: arguments[1])
    let megabyte = SafeSave.chunkSize
    var paused = false
    let pauseOnce: (Int64) -> Void = { written in
        guard !paused, written >= Int64(megabyte) else { return }
        paused = true
        printLine("WRITING")
        _ = readLine()
    }
    switch arguments[0] {
    case "file":
        try SafeSave.write(Data(repeating: 0x41, count: 2 * megabyte), to: url, creating: false, progress: pauseOnce)
    case "package":
        let package = try FilePackage(entries: [
            "one.bin": .file(Data(repeating: 0x31, count: megabyte)),
            "two.bin": .file(Data(repeating: 0x32, count: megabyte)),
        ])
        try SafeSave.writePackage(package, to: url, creating: false, progress: pauseOnce)
    default:
        printLine("bad kind \(arguments[0])")
        exit(2)
    }
    printLine("SAVED")
}

/// One whole line on stdout, unbuffered (the parent reads it through a pipe).
private func printLine(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    bytes.withUnsafeBytes { _ = write(1, $0.baseAddress, $0.count) }
}
