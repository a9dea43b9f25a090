import FileCoordination
import Foundation
import Glibc
import Synchronization
import SystemSupport

/// Moves things while the others work, in turn: the moving folder (holding two shared files that
/// documents have open) from `sub` to `sub.moved` or back, its own file inside that folder from
/// one name to the other, both with a coordinated move (`.forMoving` + `.forReplacing` and
/// `item(at:didMoveTo:)`), and its scratch file at the top without coordination (written,
/// renamed, unlinked — what other programs do next to the documents).
///
/// Every rename refuses to replace (`RENAME_NOREPLACE`): the movers never destroy anything, so
/// finding both names taken, with both locked, is an anomaly (recorded once), not something to repair.
enum MoverWorker {
    enum Outcome { case moved, raced, bothExist, failed }
    /// Whether a mover already recorded that both names of something were taken.
    static let reportedBothExist = Atomic<Bool>(false)

    static func run(_ context: WorkerContext) {
        var step = 0
        while !context.shouldStop {
            switch step % 3 {
            case 0: moveFolder(context)
            case 1: moveOwnFile(context)
            default: touchScratch(context, step: step / 3)
            }
            step += 1
            context.pause(context.pauseMilliseconds)
        }
    }

    static func exists(_ url: URL) -> Bool {
        var info = stat()
        return lstat(url.path, &info) == 0
    }

    private static func moveFolder(_ context: WorkerContext) {
        let folders = context.layout.movingFolders
        // Not atomic (another mover may move it between the two checks): the move checks again
        // with both names locked.
        guard let from = folders.firstIndex(where: exists) else {
            context.log.count("raced")
            return
        }
        if coordinatedMove(from: folders[from], to: folders[1 - from], context) == .moved {
            context.log.count("folder-moves")
        }
    }

    private static func moveOwnFile(_ context: WorkerContext) {
        let names = RunLayout.moverFileNames(context.index)
        guard let folder = context.layout.movingFolders.first(where: exists) else {
            context.log.count("raced")
            return
        }
        let places = names.map { folder.appendingPathComponent($0) }
        guard let from = places.firstIndex(where: exists) else {
            // The first time: make it, coordinated (unless the folder moved meanwhile).
            do {
                let made = try Coordinator().coordinate(writingItemAt: places[0]) { url -> Bool in
                    // The folder may have moved away and back since the look above, bringing
                    // the file made before: then it is there already (raced, not an error).
                    guard exists(url.deletingLastPathComponent()), !exists(url) else { return false }
                    try Data("mover \(context.index)\n".utf8).write(to: url, options: .withoutOverwriting)
                    return true
                }
                if !made { context.log.count("raced") }
            } catch {
                context.log.error(ErrorClassification.kind(of: error),
                                  ErrorClassification.message(error, during: "create \(places[0].path)"))
            }
            return
        }
        if coordinatedMove(from: places[from], to: places[1 - from], context) == .moved {
            context.log.count("file-moves")
        }
    }

    /// A coordinated move of `from` to `to`, if `from` is still there and `to` still free once
    /// the locks are held (another mover may have moved the folder meanwhile).
    private static func coordinatedMove(from: URL, to: URL, _ context: WorkerContext) -> Outcome {
        let coordinator = Coordinator()
        do {
            let outcome = try coordinator.coordinate(writingItemAt: from, options: .forMoving,
                                              writingItemAt: to, options: .forReplacing) { source, destination in
                if exists(source) && exists(destination) { return Outcome.bothExist }
                guard exists(source), !exists(destination) else { return Outcome.raced }
                if case .failure(let error) = RenameAt2.rename(source.path, to: destination.path, flag: .noReplace) {
                    throw SoakError("rename \(source.path) to \(destination.path): \(error)")
                }
                coordinator.item(at: source, didMoveTo: destination)
                return Outcome.moved
            }
            switch outcome {
            case .raced: context.log.count("raced")
            case .bothExist where !reportedBothExist.exchange(true, ordering: .relaxed):
                context.log.anomaly("both \(from.path) and \(to.path) exist (seen with both locked for the move)")
            default: break
            }
            return outcome
        } catch {
            context.log.error(ErrorClassification.kind(of: error),
                              ErrorClassification.message(error, during: "move \(from.path) to \(to.path)"))
            return .failed
        }
    }

    /// Without coordination: write the scratch file, rename it, unlink it (in turn).
    private static func touchScratch(_ context: WorkerContext, step: Int) {
        let (scratch, renamed) = context.layout.scratch(context.index)
        switch step % 3 {
        case 0:
            let descriptor = open(scratch.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            if descriptor >= 0 {
                let bytes = Array("scratch \(context.index) \(step)\n".utf8)
                _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                close(descriptor)
            }
        case 1:
            _ = rename(scratch.path, renamed.path)
        default:
            _ = unlink(renamed.path)
        }
        context.log.count("scratch-operations")
    }
}
