// Worker command for save requests to a CloudDocument open in another process
// (Tests/FileCoordinationTests/RemoteDocumentSaveTests.swift).
//
//   remote-document <path>
//        open a CloudDocument of <path> (the main queue runs, as in an app), print "OPENED <text>",
//        then obey stdin lines, each answered with one line:
//          edit <text>              the document's text becomes <text>, unsaved  → "EDITED"
//          read <path> main|thread  a coordinated read of <path> (no timeout), run synchronously
//                                   on the main queue (blocking it, as a program that coordinates
//                                   there does) or on a thread of its own
//                                   → "READ <text>" or "READ-FAILED <error>" (newlines as ⏎)
//          state                    → "STATE unsaved", "STATE saved" or "STATE closed" (closed for an eviction)
//          block-main               the main queue waits for "unblock-main" (as a program blocked
//                                   on a pipe there would)  → "BLOCKED", later "UNBLOCKED"
//          report-saves             from now on, a save request from another process prints
//                                   "SAVE-ASKED" when it arrives  → "REPORTING"
//        At the end of stdin the document closes (saving what is unsaved): "CLOSED", after
//        "CLOSE-FAILED <error>" when that save failed.
import CloudDocuments
import Foundation

/// Runs `remote-document`; never returns (the main thread serves the main queue).
func runRemoteDocumentCommand(_ arguments: [String]) -> Never {
    guard let path = arguments.first else {
        say("usage: remote-document <path>")
        exit(2)
    }
    let document = WorkerTextDocument(fileURL: URL(fileURLWithPath: path))
    let mainUnblocked = DispatchSemaphore(value: 0)
    Thread {
        let opened = onMain { () async throws -> String in
            try await document.openThrowing()
            return document.text
        }
        switch opened {
        case .success(let text): say("OPENED \(oneLine(text))")
        case .failure(let error):
            say("ERROR \(error)")
            exit(1)
        }
        while let line = readLine() {
            let words = line.split(separator: " ", maxSplits: 1).map(String.init)
            switch (words.first, words.count > 1 ? words[1] : "") {
            case ("edit", let text):
                _ = onMain { () async throws -> Void in
                    document.text = text
                    document.updateChangeCount(.done)
                }
                say("EDITED")
            case ("read", let rest):
                let parts = rest.split(separator: " ").map(String.init)
                let url = URL(fileURLWithPath: parts.first ?? "")
                let read = { () -> String in
                    do {
                        let text = try Coordinator().coordinate(readingItemAt: url) { try String(contentsOf: $0, encoding: .utf8) }
                        return "READ \(oneLine(text))"
                    } catch {
                        return "READ-FAILED \(error)"
                    }
                }
                say(parts.last == "main" ? DispatchQueue.main.sync { read() } : read())
            case ("block-main", _):
                DispatchQueue.main.async {
                    say("BLOCKED")
                    mainUnblocked.wait()
                    say("UNBLOCKED")
                }
            case ("report-saves", _):
                document.reportsSaveRequests.withLock { $0 = true }
                say("REPORTING")
            case ("unblock-main", _):
                mainUnblocked.signal()
            case ("state", _):
                say(document.documentState.contains(.closed) ? "STATE closed" : document.hasUnsavedChanges ? "STATE unsaved" : "STATE saved")
            default:
                say("unknown line \(line)")
            }
        }
        if case .failure(let error) = onMain({ () async throws -> Void in try await document.closeThrowing() }) {
            say("CLOSE-FAILED \(error)")
        }
        say("CLOSED")
        exit(0)
    }.start()
    dispatchMain()
}

/// A plain text document (its hooks run on the main actor, as in an app).
final class WorkerTextDocument: CloudDocument {
    var text = ""
    /// Whether `savePresentedItemChanges` prints "SAVE-ASKED" (it runs on the presenter queue).
    let reportsSaveRequests = Locked(false)

    override func contents(forType typeName: String) throws -> DocumentContents {
        .data(Data(text.utf8))
    }

    override func load(fromContents contents: DocumentContents, ofType typeName: String?) throws {
        text = String(decoding: contents.data ?? Data(), as: UTF8.self)
    }

    override func savePresentedItemChanges(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        if reportsSaveRequests.withLock({ $0 }) { say("SAVE-ASKED") }
        super.savePresentedItemChanges(completionHandler: completionHandler)
    }
}

/// Runs `body` on the main actor and waits for it (from a thread that is not the main one).
private func onMain<T: Sendable>(_ body: @escaping @MainActor @Sendable () async throws -> T) -> Result<T, any Error> {
    let done = DispatchSemaphore(value: 0)
    let result = Locked<Result<T, any Error>?>(nil)
    Task { @MainActor in
        let outcome: Result<T, any Error>
        do { outcome = .success(try await body()) } catch { outcome = .failure(error) }
        result.withLock { $0 = outcome }
        done.signal()
    }
    done.wait()
    return result.withLock { $0 } ?? .failure(CancellationError())
}

private func oneLine(_ text: String) -> String {
    text.replacingOccurrences(of: "\n", with: "⏎")
}
