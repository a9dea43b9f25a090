// Undo code written the way Apple-platform code writes it — `UndoManager()`, a target and a
// handler, groups, action names, notifications observed by name — compiled against
// CloudDocuments (no @testable: public API only) in a file that imports Foundation too, and run.
import Foundation
import CloudDocuments
import Synchronization
import Testing

/// A playlist whose edits register their inverse: the usual Apple pattern.
private final class Playlist {
    let undoManager: UndoManager
    private(set) var songs: [String] = []
    /// `isUndoing`/`isRedoing` as seen by each handler run, in order.
    private(set) var seenInHandlers: [String] = []

    init(undoManager: UndoManager) { self.undoManager = undoManager }

    func add(_ song: String) {
        songs.append(song)
        undoManager.registerUndo(withTarget: self) { playlist in
            playlist.note()
            playlist.remove(song)
        }
        if !undoManager.isUndoing && !undoManager.isRedoing {
            undoManager.setActionName("Add Song")
        }
    }

    func remove(_ song: String) {
        guard let index = songs.lastIndex(of: song) else { return }
        songs.remove(at: index)
        undoManager.registerUndo(withTarget: self) { playlist in
            playlist.note()
            playlist.add(song)
        }
        if !undoManager.isUndoing && !undoManager.isRedoing {
            undoManager.setActionName("Remove Song")
        }
    }

    private func note() {
        seenInHandlers.append(undoManager.isUndoing ? "undoing" : undoManager.isRedoing ? "redoing" : "neither")
    }
}

/// A main-actor model, as UIKit code (and a main-actor document subclass) is written: the
/// handlers touch main-actor state, without locks or `@unchecked Sendable`.
@MainActor
private final class Canvas {
    let undoManager = UndoManager()
    private(set) var strokes: [String] = []

    func draw(_ stroke: String) {
        strokes.append(stroke)
        undoManager.registerUndo(withTarget: self) { canvas in canvas.erase(stroke) }
        undoManager.setActionName("Draw")
    }

    func erase(_ stroke: String) {
        strokes.removeAll { $0 == stroke }
        undoManager.registerUndo(withTarget: self) { $0.draw(stroke) }
        undoManager.setActionName("Erase")
    }
}

/// Records the short names of the undo notifications a manager posts, in order.
private final class NotificationLog: Sendable {
    static let names: [(Notification.Name, String)] = [
        (.NSUndoManagerCheckpoint, "checkpoint"),
        (.NSUndoManagerDidOpenUndoGroup, "didOpen"),
        (.NSUndoManagerWillCloseUndoGroup, "willClose"),
        (.NSUndoManagerDidCloseUndoGroup, "didClose"),
        (.NSUndoManagerWillUndoChange, "willUndo"),
        (.NSUndoManagerDidUndoChange, "didUndo"),
        (.NSUndoManagerWillRedoChange, "willRedo"),
        (.NSUndoManagerDidRedoChange, "didRedo"),
    ]
    private let entries = Mutex<[String]>([])

    /// Observes `manager`'s notifications until `body` returns; returns `body`'s result.
    static func recording<Result>(_ manager: UndoManager, _ body: (NotificationLog) throws -> Result) rethrows -> Result {
        let log = NotificationLog()
        let tokens = names.map { name, short in
            NotificationCenter.default.addObserver(forName: name, object: manager, queue: nil) { [log] _ in
                log.entries.withLock { $0.append(short) }
            }
        }
        defer { for token in tokens { NotificationCenter.default.removeObserver(token) } }
        return try body(log)
    }

    /// Returns the names recorded since the last call, and forgets them.
    func take() -> [String] { entries.withLock { entries in defer { entries = [] }; return entries } }
}

/// Waits for the main queue's next turn: every block queued on it before this call has run.
@MainActor
private func nextMainQueueTurn() async {
    await withCheckedContinuation { continuation in
        DispatchQueue.main.async { continuation.resume() }
    }
}

@Suite("UndoManager as Apple-platform code uses it")
struct AppleStyleUndoManagerTests {
    @Test("register with a target and handler; undo and redo replay inverses; names and menu titles")
    func targetAndHandler() {
        let undo = UndoManager()
        let playlist = Playlist(undoManager: undo)
        #expect(!undo.canUndo && !undo.canRedo)
        #expect(undo.undoMenuItemTitle == "Undo")
        #expect(undo.redoMenuItemTitle == "Redo")

        playlist.add("Blue")
        playlist.add("Green")
        #expect(undo.canUndo)
        #expect(undo.undoActionName == "Add Song")
        #expect(undo.undoMenuItemTitle == "Undo Add Song")

        undo.undo()
        #expect(playlist.songs == ["Blue"])
        #expect(undo.canRedo)
        #expect(undo.redoActionName == "Add Song", "the redo step keeps the undone step's name")
        #expect(undo.redoMenuItemTitle == "Redo Add Song")
        playlist.remove("Blue")
        #expect(!undo.canRedo, "a new change clears the redo stack")
        #expect(undo.undoMenuItemTitle == "Undo Remove Song")
        undo.undo()
        #expect(playlist.songs == ["Blue"])
        undo.redo()
        #expect(playlist.songs == [])
        #expect(playlist.seenInHandlers == ["undoing", "undoing", "redoing"])
        #expect(!undo.isUndoing && !undo.isRedoing)

        #expect(undo.undoMenuTitle(forUndoActionName: "Paste") == "Undo Paste")
        #expect(undo.redoMenuTitle(forUndoActionName: "") == "Redo")
        let sameClass: DocumentUndoManager = undo  // the old name still compiles
        #expect(sameClass === undo)
    }

    @Test("explicit groups undo in one step; groupingLevel counts nesting")
    func explicitGroups() {
        let undo = UndoManager()
        let playlist = Playlist(undoManager: undo)
        #expect(!undo.groupsByEvent, "off by default on Linux (see Docs/Documents.md)")
        undo.beginUndoGrouping()
        playlist.add("A")
        undo.beginUndoGrouping()
        #expect(undo.groupingLevel == 2)
        playlist.add("B")
        undo.endUndoGrouping()
        playlist.add("C")
        undo.setActionName("Add Three")
        undo.endUndoGrouping()
        #expect(undo.groupingLevel == 0)
        #expect(undo.undoMenuItemTitle == "Undo Add Three")
        undo.undo()
        #expect(playlist.songs.isEmpty)
        undo.redo()
        #expect(playlist.songs == ["A", "B", "C"])
    }

    @Test("undoNestedGroup undoes the nested group just closed, inside the open group")
    func nestedUndo() {
        let undo = UndoManager()
        let playlist = Playlist(undoManager: undo)
        playlist.add("kept")
        undo.beginUndoGrouping()
        playlist.add("A")
        undo.beginUndoGrouping()
        playlist.add("B")
        playlist.add("C")
        undo.endUndoGrouping()
        undo.undoNestedGroup()  // cancels B and C only
        #expect(playlist.songs == ["kept", "A"])
        #expect(undo.groupingLevel == 1, "the outer group stays open")
        #expect(undo.canRedo)
        undo.undoNestedGroup()  // the last entry of the open group is an action, not a group: ignored
        #expect(playlist.songs == ["kept", "A"])
        undo.endUndoGrouping()
        undo.undo()  // the outer group now holds only A
        #expect(playlist.songs == ["kept"])
        undo.undoNestedGroup()  // with no group open: the top-level group, like undo()
        #expect(playlist.songs == [])
        #expect(!undo.canUndo)
    }

    @Test("disableUndoRegistration nests; enableUndoRegistration resumes when balanced")
    func disabling() {
        let undo = UndoManager()
        let playlist = Playlist(undoManager: undo)
        undo.disableUndoRegistration()
        undo.disableUndoRegistration()
        playlist.add("not recorded")
        undo.enableUndoRegistration()
        #expect(!undo.isUndoRegistrationEnabled)
        playlist.add("still not recorded")
        undo.enableUndoRegistration()
        #expect(undo.isUndoRegistrationEnabled)
        #expect(!undo.canUndo)
        playlist.add("recorded")
        undo.undo()
        #expect(playlist.songs == ["not recorded", "still not recorded"])
    }

    @Test("levelsOfUndo drops the oldest groups; lowering it drops them at once")
    func levels() {
        let undo = UndoManager()
        undo.levelsOfUndo = 3
        let playlist = Playlist(undoManager: undo)
        for song in ["1", "2", "3", "4", "5"] { playlist.add(song) }
        while undo.canUndo { undo.undo() }
        #expect(playlist.songs == ["1", "2"], "only the last three additions were undoable")
        while undo.canRedo { undo.redo() }
        #expect(playlist.songs == ["1", "2", "3", "4", "5"])
        undo.levelsOfUndo = 1
        while undo.canUndo { undo.undo() }
        #expect(playlist.songs == ["1", "2", "3", "4"])
    }

    @Test("removeAllActions(withTarget:) forgets one target; a deallocated target is skipped")
    func targets() {
        let undo = UndoManager()
        let first = Playlist(undoManager: undo)
        var second: Playlist? = Playlist(undoManager: undo)
        first.add("x")
        second?.add("y")
        first.add("z")
        undo.removeAllActions(withTarget: first)
        #expect(undo.canUndo)
        second = nil
        undo.undo()  // y's target is gone: nothing runs
        #expect(!undo.canUndo)
        #expect(first.songs == ["x", "z"])
        undo.removeAllActions()
        #expect(!undo.canRedo)
    }

    @Test("notifications are posted synchronously, in Apple's documented order")
    func notificationOrder() {
        let undo = UndoManager()
        let playlist = Playlist(undoManager: undo)
        NotificationLog.recording(undo) { log in
            undo.beginUndoGrouping()
            #expect(log.take() == ["checkpoint", "didOpen"])
            playlist.add("A")
            #expect(log.take() == [])
            undo.endUndoGrouping()
            #expect(log.take() == ["checkpoint", "willClose", "didClose"])

            playlist.add("B")  // outside any group: a group of its own, opened and closed
            #expect(log.take() == ["didOpen", "checkpoint", "willClose", "didClose"])

            undo.undo()
            #expect(log.take() == ["checkpoint", "willUndo", "didUndo"])
            #expect(undo.canRedo)
            #expect(log.take() == ["checkpoint"], "canRedo posts a checkpoint")
            undo.redo()
            #expect(log.take() == ["checkpoint", "willRedo", "didRedo"])

            undo.beginUndoGrouping()
            playlist.add("C")
            undo.undo()  // closes the open group first
            #expect(log.take() == ["checkpoint", "didOpen", "checkpoint", "willClose", "didClose",
                                   "checkpoint", "willUndo", "didUndo"])

            undo.removeAllActions()
            undo.undo()  // nothing to undo
            undo.redo()
            #expect(log.take() == ["checkpoint", "checkpoint"])
        }
        #expect(UndoManager.didUndoChangeNotification.rawValue == "NSUndoManagerDidUndoChangeNotification")
        #expect(Notification.Name.NSUndoManagerCheckpoint.rawValue == "NSUndoManagerCheckpointNotification")
        #expect(UndoManager.willCloseUndoGroupNotification == .NSUndoManagerWillCloseUndoGroup)
    }

    @Test("a checkpoint observer's registration joins the group being closed")
    func checkpointObserverRegisters() {
        let undo = UndoManager()
        let playlist = Playlist(undoManager: undo)
        let pending = Mutex<String?>("late")
        // Delayed changes register their undo on the checkpoint, as Apple's guide advises. The
        // observer runs synchronously on this thread, so touching `playlist` there is safe.
        nonisolated(unsafe) let target = playlist
        let token = NotificationCenter.default.addObserver(forName: UndoManager.checkpointNotification,
                                                           object: undo, queue: nil) { _ in
            if let song = pending.withLock({ value in defer { value = nil }; return value }) { target.add(song) }
        }
        defer { NotificationCenter.default.removeObserver(token) }
        undo.beginUndoGrouping()
        pending.withLock { $0 = "late" }  // the checkpoint of beginUndoGrouping consumed the first
        playlist.add("early")
        undo.endUndoGrouping()
        #expect(playlist.songs == ["late", "early", "late"])
        undo.undo()
        #expect(playlist.songs == ["late"], "both registrations of the group were undone together")
    }

    @Test("a main-actor model registers and undoes without warnings or locks")
    @MainActor
    func mainActorModel() {
        let canvas = Canvas()
        canvas.draw("line")
        canvas.draw("circle")
        #expect(canvas.undoManager.undoMenuItemTitle == "Undo Draw")
        canvas.undoManager.undo()
        #expect(canvas.strokes == ["line"])
        #expect(canvas.undoManager.redoMenuItemTitle == "Redo Erase", "set by the handler, as on Apple platforms")
        canvas.undoManager.redo()
        #expect(canvas.strokes == ["line", "circle"])
    }

    @Test("undo() with nested groups open closes them all first (Apple raises an exception)")
    func undoClosesNestedGroups() {
        let undo = UndoManager()
        let playlist = Playlist(undoManager: undo)
        undo.beginUndoGrouping()
        playlist.add("A")
        undo.beginUndoGrouping()
        playlist.add("B")
        undo.undo()
        #expect(playlist.songs.isEmpty)
        #expect(undo.groupingLevel == 0)
        undo.endUndoGrouping()  // unmatched now: ignored
        #expect(undo.canRedo)
    }

    // MARK: Grouping by event

    @Test("groupsByEvent on the main actor: registrations of one main-queue turn are one undo step")
    @MainActor
    func groupsByEventOnMainActor() async {
        let undo = UndoManager()
        undo.groupsByEvent = true
        let playlist = Playlist(undoManager: undo)
        await NotificationLog.recording(undo) { log in
            playlist.add("A")
            playlist.add("B")
            #expect(undo.groupingLevel == 1, "an automatic group is open")
            #expect(log.take() == ["didOpen"])
            #expect(undo.canUndo)
            await nextMainQueueTurn()
            #expect(undo.groupingLevel == 0, "closed on the next turn")
            #expect(log.take() == ["checkpoint", "willClose", "didClose"])
            undo.undo()
            #expect(playlist.songs.isEmpty, "one step undid both")

            // undo() within the same turn closes the automatic group first.
            playlist.add("C")
            playlist.add("D")
            undo.undo()
            #expect(playlist.songs.isEmpty)
            #expect(undo.groupingLevel == 0)
            await nextMainQueueTurn()  // its scheduled close finds nothing to do
            #expect(undo.groupingLevel == 0)
            _ = log.take()

            // An explicit group inside the automatic one nests; a turn that ends while it is open
            // closes the automatic group as soon as it ends.
            playlist.add("E")
            undo.beginUndoGrouping()
            playlist.add("F")
            await nextMainQueueTurn()
            #expect(undo.groupingLevel == 2)
            undo.endUndoGrouping()
            #expect(undo.groupingLevel == 0)
            undo.undo()
            #expect(playlist.songs.isEmpty, "E and F were one step")
        }
    }

    @Test("groupsByEvent and the document: dirty at the first registration, clean after one undo")
    @MainActor
    func groupsByEventDrivesChangeCount() async {
        let document = NoteDocument(fileURL: URL(fileURLWithPath: "/tmp/groups-by-event.txt"))
        document.undoManager.groupsByEvent = true
        document.edit("a")
        #expect(document.hasUnsavedChanges, "counted when the automatic group opens, not at its close")
        document.edit("ab")
        await nextMainQueueTurn()
        #expect(document.undoManager.groupingLevel == 0)
        document.undoManager.undo()
        #expect(document.text == "")
        #expect(!document.hasUnsavedChanges, "one step done, one step undone")
        document.undoManager.redo()
        #expect(document.text == "ab")
        #expect(document.hasUnsavedChanges)
    }

    @Test("groupsByEvent off the main queue: each registration outside a group is its own step")
    func groupsByEventOffMainQueue() async {
        let songs = await Task.detached {
            let undo = UndoManager()
            undo.groupsByEvent = true
            let playlist = Playlist(undoManager: undo)
            playlist.add("A")
            playlist.add("B")
            #expect(undo.groupingLevel == 0)
            undo.undo()
            return playlist.songs
        }.value
        #expect(songs == ["A"])
    }
}

extension NotificationLog {
    /// `recording` for an async body on the main actor.
    @MainActor
    static func recording(_ manager: UndoManager, _ body: @MainActor (NotificationLog) async -> Void) async {
        let log = NotificationLog()
        let tokens = names.map { name, short in
            NotificationCenter.default.addObserver(forName: name, object: manager, queue: nil) { [log] _ in
                log.entries.withLock { $0.append(short) }
            }
        }
        await body(log)
        for token in tokens { NotificationCenter.default.removeObserver(token) }
    }
}
