// Commands of the test helper that change files the way programs which do not coordinate do
// (see main.swift for the conventions).
//
//   syncthing-replace <file> <contents>   replace <file> as Syncthing does when it receives a new
//                                         version: write `.syncthing.<name>.tmp` beside it, delete
//                                         <file>, rename the temporary file to <file>; no
//                                         coordination; print "REPLACED"
//   syncthing-rename <file> <new-name>    rename <file> as Syncthing does when the other side
//                                         renamed it: to `.syncthing.<new-name>.tmp`, then to
//                                         <new-name> in the same folder; print "RENAMED"
//   exchange <a> <b>                      swap two names at once (renameat2 RENAME_EXCHANGE), as
//                                         safe saves do; print "EXCHANGED"
import CSystemShim
import Foundation
import Glibc

/// Runs `exchange`; `arguments` are the words after the command.
func runExchange(_ arguments: [String]) {
    guard arguments.count == 2 else {
        say("usage: exchange <a> <b>")
        exit(2)
    }
    // glibc's wrapper, declared by CSystemShim (the Glibc module does not import it); errno is
    // read inside the closure, right after the call.
    let (result, code) = arguments[0].withCString { a in
        arguments[1].withCString { b in
            (cshim_renameat2(AT_FDCWD, a, AT_FDCWD, b, CSHIM_RENAME_EXCHANGE), errno)
        }
    }
    say(result == 0 ? "EXCHANGED" : "ERROR renameat2 \(code)")
}

/// Runs one of the commands above.
func runUncoordinatedCommand(_ command: String, _ arguments: [String]) {
    switch command {
    case "syncthing-rename": runSyncthingRename(arguments)
    case "exchange": runExchange(arguments)
    default: runSyncthingReplace(arguments)
    }
}

/// Runs `syncthing-rename`; `arguments` are the words after the command.
func runSyncthingRename(_ arguments: [String]) {
    guard arguments.count == 2 else {
        say("usage: syncthing-rename <file> <new-name>")
        exit(2)
    }
    let file = URL(fileURLWithPath: arguments[0])
    let folder = file.deletingLastPathComponent()
    let temporary = folder.appendingPathComponent(".syncthing.\(arguments[1]).tmp")
    guard rename(file.path, temporary.path) == 0 else { return say("ERROR rename \(errno)") }
    guard rename(temporary.path, folder.appendingPathComponent(arguments[1]).path) == 0 else {
        return say("ERROR rename \(errno)")
    }
    say("RENAMED")
}

/// Runs `syncthing-replace`; `arguments` are the words after the command.
func runSyncthingReplace(_ arguments: [String]) {
    guard arguments.count == 2 else {
        say("usage: syncthing-replace <file> <contents>")
        exit(2)
    }
    let file = URL(fileURLWithPath: arguments[0])
    let temporary = file.deletingLastPathComponent().appendingPathComponent(".syncthing.\(file.lastPathComponent).tmp")
    let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard descriptor >= 0 else { return say("ERROR open \(errno)") }
    let bytes = Array(arguments[1].utf8)
    let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    close(descriptor)
    guard written == bytes.count else { return say("ERROR write \(errno)") }
    guard unlink(file.path) == 0 else { return say("ERROR unlink \(errno)") }
    guard rename(temporary.path, file.path) == 0 else { return say("ERROR rename \(errno)") }
    say("REPLACED")
}
