// Worker command for two or three processes editing one document at once
// (Tests/FileCoordinationTests/CrossProcessEditingTests.swift; issue 15's first case).
//
//   document-loop <path> <tag> <count> [--report]
//        opens a TextDocument of <path> (the main queue runs, as in an app) and prints "OPENED";
//        on the line "go" on stdin, <count> times: appends "<tag>-<i>\n" and saves (with
//        --report, then prints "SAVED <tag>-<i>": the parent may SIGKILL it at any time), then reads
//        <path> through a coordinated read off the main actor (the async form, library defaults,
//        no timeout). Then closes the document and prints
//        "DONE missing=<own lines not in the read that followed their save> cutoffs=<answers from
//        other processes not awaited past the limit>", or "ERROR <description>".
//   append-loop <path> <tag> <count>
//        prints "READY"; on the line "go" on stdin, <count> times: the README's read-modify-write
//        (one coordinated write that reads <path>, appends "<tag>-<i>\n" and writes it back
//        atomically). Then prints "DONE cutoffs=<answers not awaited past the limit>", or
//        "ERROR <description>".
import CloudDocuments
import ExampleDocuments
import Foundation
@testable import FileCoordination

/// Runs `document-loop`; never returns (the main thread serves the main queue).
func runDocumentLoopCommand(_ arguments: [String]) -> Never {
    guard arguments.count == 3 || (arguments.count == 4 && arguments[3] == "--report"), let count = Int(arguments[2]) else {
        say("usage: document-loop <path> <tag> <count> [--report]")
        exit(2)
    }
    let reportsSaves = arguments.count == 4
    let url = URL(fileURLWithPath: arguments[0])
    let tag = arguments[1]
    Task { @MainActor in
        do {
            let document = TextDocument(fileURL: url)
            try await document.openThrowing()
            say("OPENED")
            guard await standardInputLine() == "go" else { exit(2) }
            var missing = 0
            for index in 0..<count {
                let line = "\(tag)-\(index)\n"
                document.append(line)
                try await document.saveThrowing(to: url, for: .forOverwriting)
                if reportsSaves { say("SAVED \(tag)-\(index)") }
                let intent = FileAccessIntent.readingIntent(with: url)
                let text = try await Coordinator().coordinate(with: [intent]) { intents in
                    try String(contentsOf: intents[0].url, encoding: .utf8)
                }
                if !text.contains(line) { missing += 1 }
            }
            try await document.closeThrowing()
            say("DONE missing=\(missing) cutoffs=\(RemoteLog.cutOffCount)")
            exit(0)
        } catch {
            say("ERROR \(error.localizedDescription)")
            exit(1)
        }
    }
    dispatchMain()
}

/// Runs `append-loop`.
func runAppendLoopCommand(_ arguments: [String]) -> Never {
    guard arguments.count == 3, let count = Int(arguments[2]) else {
        say("usage: append-loop <path> <tag> <count>")
        exit(2)
    }
    let url = URL(fileURLWithPath: arguments[0])
    say("READY")
    guard readLine() == "go" else { exit(2) }
    do {
        for index in 0..<count {
            try Coordinator().coordinate(writingItemAt: url) { url in
                let text = try String(contentsOf: url, encoding: .utf8)
                try (text + "\(arguments[1])-\(index)\n").write(to: url, atomically: true, encoding: .utf8)
            }
        }
        say("DONE cutoffs=\(RemoteLog.cutOffCount)")
        exit(0)
    } catch {
        say("ERROR \(error.localizedDescription)")
        exit(1)
    }
}

/// The next line of standard input, read on a thread of its own (the main actor stays free).
private func standardInputLine() async -> String? {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: readLine()) }.start()
    }
}

/// `conflict-lines <path>`: prints every line of every unresolved conflict version of <path>
/// (one line each), then "END <number of versions>".
func runConflictLinesCommand(_ arguments: [String]) -> Never {
    guard let path = arguments.first else {
        say("usage: conflict-lines <path>")
        exit(2)
    }
    do {
        let versions = try FileVersion.unresolvedConflictVersionsOfItem(at: URL(fileURLWithPath: path))
        for version in versions {
            let text = (try? String(contentsOf: version.url, encoding: .utf8)) ?? ""
            for line in text.split(separator: "\n") { say(String(line)) }
        }
        say("END \(versions.count)")
        exit(0)
    } catch {
        say("ERROR \(error.localizedDescription)")
        exit(1)
    }
}
