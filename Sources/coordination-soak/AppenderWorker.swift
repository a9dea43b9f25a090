import FileCoordination
import Foundation

/// The README's read-modify-write, in a loop: one coordinated write that reads a shared file,
/// appends a unique line and writes the whole text back atomically. The line is confirmed (logged)
/// when the call returns. The shared files are taken in turn.
///
/// A file in the moving folder may be at either of its two places; the write checks, inside the
/// coordinated write, that the file is there, and otherwise tries the other place (the move
/// messages of another process do not redirect a coordination waiting for the old place), never
/// creating the file anywhere.
enum AppenderWorker {
    static func run(_ context: WorkerContext) {
        let layout = context.layout
        var sequence = 0
        var fileIndex = 0
        while !context.shouldStop {
            let line = SoakLine.make(.appender, worker: context.index, sequence: sequence)
            let candidates = layout.sharedCandidates(fileIndex % RunLayout.sharedCount)
            fileIndex += 1
            var appended = false
            var wrote = false
            var place = candidates[0]
            for url in candidates where !appended && !wrote {
                do {
                    place = url
                    appended = try Coordinator().coordinate(writingItemAt: url) { url -> Bool in
                        guard let data = FileManager.default.contents(atPath: url.path) else { return false }
                        guard let text = String(validating: data, as: UTF8.self) else {
                            throw SoakError("\(url.lastPathComponent) is not valid UTF-8 (\(data.count) bytes)")
                        }
                        try (text + line + "\n").write(to: url, atomically: true, encoding: .utf8)
                        wrote = true
                        return true
                    }
                } catch {
                    context.log.error(ErrorClassification.kind(of: error),
                                      ErrorClassification.message(error, during: "append to \(url.path)"))
                }
            }
            if appended {
                context.log.confirmed(line, in: place)
                context.log.count("appends")
            } else if !wrote {
                context.log.count("not-found-retries")
                continue  // nothing was written: the same line may be used again
            }
            // Written but the call threw afterwards: not confirmed, and never reused.
            sequence += 1
            context.pause(context.pauseMilliseconds)
        }
    }
}
