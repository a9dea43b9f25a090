// Commands of the test helper that change a folder's contents the way programs which do not
// coordinate do (a sync tool, `cp`, `rm`), for the tests of folder presenters (see main.swift for
// the conventions).
//
//   uncoordinated-create <file> <contents>   make the file's missing folders (as `mkdir -p`),
//                                            then the file (open, one write, close); no
//                                            coordination; print "CREATED"
//   uncoordinated-delete <path>              delete the file, or the folder with everything in
//                                            it; no coordination; print "DELETED"
//   uncoordinated-burst <folder> <count>     make files `f0` … `f<count-1>` in the folder, one after
//                                            the other, as `cp` would; print "MADE <count>"
//
// A replacement the way Syncthing delivers an update is `syncthing-replace`
// (UncoordinatedCommands.swift).
import Foundation
import Glibc

/// Runs one of the commands above; `arguments` are the words after the command.
func runFolderCommand(_ command: String, _ arguments: [String]) {
    switch command {
    case "uncoordinated-create":
        guard arguments.count == 2 else { say("usage: uncoordinated-create <file> <contents>"); exit(2) }
        let file = URL(fileURLWithPath: arguments[0])
        var folders: [String] = []
        var folder = file.deletingLastPathComponent()
        while access(folder.path, F_OK) != 0 {
            folders.append(folder.path)
            folder = folder.deletingLastPathComponent()
        }
        for path in folders.reversed() where mkdir(path, 0o755) != 0 && errno != EEXIST {
            return say("ERROR mkdir \(errno)")
        }
        let descriptor = open(file.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return say("ERROR open \(errno)") }
        let bytes = Array(arguments[1].utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
        say(written == bytes.count ? "CREATED" : "ERROR write \(errno)")
    case "uncoordinated-burst":
        guard arguments.count == 2, let count = Int(arguments[1]) else { say("usage: uncoordinated-burst <folder> <count>"); exit(2) }
        for index in 0..<count {
            let descriptor = open(arguments[0] + "/f\(index)", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else { return say("ERROR open \(errno)") }
            let bytes = Array("file \(index)".utf8)
            _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            close(descriptor)
        }
        say("MADE \(count)")
    default:
        guard arguments.count == 1 else { say("usage: uncoordinated-delete <path>"); exit(2) }
        do {
            // FileManager removes a folder's contents first, then the folder, without coordinating.
            try FileManager.default.removeItem(atPath: arguments[0])
            say("DELETED")
        } catch {
            say("ERROR \(error)")
        }
    }
}
