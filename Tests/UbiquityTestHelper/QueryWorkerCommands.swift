import Foundation
import Glibc
import Ubiquity

/// `query-mutate FOLDER`: changes files in FOLDER as told, one stdin line at a time, and answers
/// `ok` after each (the parent test waits for it, then for its query to report the change):
///
///     coordinated-create NAME TEXT   a coordinated write saving a new file (SafeSave: written under
///                                    a hidden temporary name, renamed into place)
///     plain-create NAME TEXT         an ordinary program: open, write, close
///     append NAME TEXT               an ordinary program appending
///     rename OLD NEW                 rename(2)
///     delete NAME                    unlink(2)
///
/// Names are relative to FOLDER; TEXT is the rest of the line. Ends at the end of input.
let queryWorkerCommands: [String: WorkerCommand] = [
    "query-mutate": { arguments in
        guard let folder = arguments.first.map({ URL(fileURLWithPath: $0, isDirectory: true) }) else {
            say("ERROR usage: query-mutate FOLDER")
            return
        }
        say("ready")
        while let line = readLine() {
            let parts = line.split(separator: " ", maxSplits: 2).map(String.init)
            guard parts.count >= 2 else { say("ERROR bad line \(line)"); continue }
            let url = folder.appending(path: parts[1])
            let text = parts.count > 2 ? parts[2] : ""
            switch parts[0] {
            case "coordinated-create":
                try Coordinator().coordinate(writingItemAt: url, options: .forReplacing) { target in
                    try SafeSave.write(Data(text.utf8), to: target, creating: true)
                }
            case "plain-create":
                try Data(text.utf8).write(to: url)
            case "append":
                let handle = try FileHandle(forWritingTo: url)
                try handle.seekToEnd()
                try handle.write(contentsOf: Data(text.utf8))
                try handle.close()
            case "rename":
                guard rename(url.path, folder.appending(path: text).path) == 0 else { say("ERROR rename \(errno)"); continue }
            case "delete":
                guard unlink(url.path) == 0 else { say("ERROR unlink \(errno)"); continue }
            default:
                say("ERROR unknown command \(parts[0])")
                continue
            }
            say("ok \(line)")
        }
    },
]
