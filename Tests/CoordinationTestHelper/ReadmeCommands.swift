// The README's "Coordinating by hand" snippet, run as written (see main.swift for the conventions).
//
//   readme-append <path> <times>   print "READY", wait for a line on stdin, then run the README's
//                                  read-modify-write <times> times (each adds one "!"); print "DONE"
import FileCoordination
import Foundation

/// Runs `readme-append`; `arguments` are the words after the command.
func runReadmeAppend(_ arguments: [String]) throws {
    guard arguments.count == 2, let times = Int(arguments[1]) else {
        say("usage: readme-append <path> <times>")
        exit(2)
    }
    let url = URL(fileURLWithPath: arguments[0])
    say("READY")
    _ = readLine()  // the parent starts every process at once, so their loops overlap
    for _ in 0..<times {
        // ---- README.md, "Coordinating by hand": keep the two in step ----
        let coordinator = Coordinator()
        coordinator.timeout = .seconds(5)
        try coordinator.coordinate(writingItemAt: url) { url in
            let text = try String(contentsOf: url, encoding: .utf8)
            try (text + "!").write(to: url, atomically: true, encoding: .utf8)
        }
        // ---- end of the README's snippet ----
    }
    say("DONE")
}
