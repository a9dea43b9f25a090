import Foundation
import Synchronization
import Testing
@testable import CloudDocuments

/// Collects the change kinds reported by an undo manager, in order.
private final class ChangeLog: Sendable {
    private let kinds = Locked<[ChangeKind]>([])
    var all: [ChangeKind] { kinds.withLock { $0 } }

    /// Starts logging the changes `manager` reports.
    init(watching manager: UndoManager) {
        manager.onChange = { [kinds] kind in kinds.withLock { $0.append(kind) } }
    }
}

/// A document-like model whose setter registers its own inverse, the usual Apple pattern.
private final class Model {
    let undoManager: UndoManager
    private(set) var value = 0
    private(set) var history: [Int] = []
    var observedUndoing: [Bool] = []

    init(_ undoManager: UndoManager) { self.undoManager = undoManager }

    func set(_ newValue: Int) {
        let old = value
        value = newValue
        history.append(newValue)
        undoManager.registerUndo(withTarget: self) { model in
            model.observedUndoing.append(model.undoManager.isUndoing)
            model.set(old)
        }
    }
}

/// A fresh undo manager with a change log attached and a model that registers on it.
private func loggedModel() -> (manager: UndoManager, log: ChangeLog, model: Model) {
    let manager = UndoManager()
    return (manager, ChangeLog(watching: manager), Model(manager))
}

@Suite("UndoManager: Apple's UndoManager semantics")
struct UndoManagerTests {
    @Test("a registration outside a group is its own group; undo and redo replay inverses")
    func singleActions() {
        let (manager, log, model) = loggedModel()
        #expect(!manager.canUndo)
        model.set(1)
        model.set(2)
        #expect(manager.canUndo && !manager.canRedo)
        manager.undo()
        #expect(model.value == 1)
        #expect(manager.canRedo)
        manager.undo()
        #expect(model.value == 0)
        #expect(!manager.canUndo)
        manager.redo()
        #expect(model.value == 1)
        manager.redo()
        #expect(model.value == 2)
        #expect(!manager.canRedo)
        manager.undo()
        #expect(model.value == 1)
        #expect(model.observedUndoing == [true, true, false, false, true])
        #expect(log.all == [.done, .done, .undone, .undone, .redone, .redone, .undone])
    }

    @Test("an explicit group is undone in one step, its actions in reverse order")
    func grouping() {
        let (manager, log, model) = loggedModel()
        manager.beginUndoGrouping()
        #expect(manager.groupingLevel == 1)
        model.set(1)
        model.set(2)
        model.set(3)
        #expect(log.all.isEmpty)  // nothing reported until the group closes
        manager.endUndoGrouping()
        #expect(manager.groupingLevel == 0)
        #expect(log.all == [.done])
        manager.undo()
        #expect(model.value == 0)
        #expect(model.history == [1, 2, 3, 2, 1, 0])
        manager.redo()
        #expect(model.value == 3)
        #expect(log.all == [.done, .undone, .redone])
    }

    @Test("nested groups form one group, reported once when the outermost one ends")
    func nestedGrouping() {
        let (manager, log, model) = loggedModel()
        manager.beginUndoGrouping()
        model.set(1)
        manager.beginUndoGrouping()
        #expect(manager.groupingLevel == 2)
        model.set(2)
        manager.endUndoGrouping()
        #expect(manager.groupingLevel == 1)
        #expect(log.all.isEmpty)
        model.set(3)
        manager.endUndoGrouping()
        #expect(log.all == [.done])
        model.set(4)
        #expect(log.all == [.done, .done])
        manager.undo()
        #expect(model.value == 3)
        manager.undo()
        #expect(model.value == 0)
        #expect(!manager.canUndo)
    }

    @Test("an empty group is dropped and not reported; endUndoGrouping without a group is ignored")
    func emptyGroups() {
        let (manager, log, _) = loggedModel()
        manager.beginUndoGrouping()
        manager.endUndoGrouping()
        manager.endUndoGrouping()
        #expect(manager.groupingLevel == 0)
        #expect(!manager.canUndo)
        #expect(log.all.isEmpty)
    }

    @Test("levelsOfUndo keeps only the most recent groups")
    func levels() {
        let manager = UndoManager()
        manager.levelsOfUndo = 2
        let model = Model(manager)
        model.set(1)
        model.set(2)
        model.set(3)
        manager.undo()
        manager.undo()
        #expect(model.value == 1)
        #expect(!manager.canUndo)  // the group for 0 → 1 was dropped
        manager.redo()
        manager.redo()
        #expect(model.value == 3)

        // Lowering the limit drops the oldest groups at once.
        model.set(4)
        manager.levelsOfUndo = 1
        manager.undo()
        #expect(model.value == 3)
        #expect(!manager.canUndo)
        manager.levelsOfUndo = -5
        #expect(manager.levelsOfUndo == 0)
    }

    @Test("a new registration clears the redo stack; one made while redoing does not")
    func redoClearedByNewChange() {
        let manager = UndoManager()
        let model = Model(manager)
        model.set(1)
        model.set(2)
        manager.undo()
        manager.undo()
        #expect(manager.canRedo)
        manager.redo()  // registers onto the undo stack, keeps the other redo
        #expect(manager.canRedo)
        model.set(5)
        #expect(!manager.canRedo)
        manager.undo()
        #expect(model.value == 1)
    }

    @Test("the change callbacks come in exact order, including undo with an open group and clearing")
    func callbackOrder() {
        let (manager, log, model) = loggedModel()
        model.set(1)                 // .done
        manager.beginUndoGrouping()
        model.set(2)
        model.set(3)
        manager.endUndoGrouping()    // .done
        manager.undo()               // .undone
        manager.redo()               // .redone
        manager.beginUndoGrouping()
        model.set(4)
        manager.undo()               // closes the open group: .done, then .undone
        #expect(model.value == 3)
        #expect(manager.groupingLevel == 0)
        manager.endUndoGrouping()    // ignored: already closed
        manager.undo()               // .undone
        #expect(model.value == 1)
        manager.redo()               // nothing reported for the registrations it makes: .redone
        manager.removeAllActions()   // .cleared
        #expect(!manager.canUndo && !manager.canRedo)
        manager.undo()               // nothing to undo: nothing reported
        manager.redo()
        #expect(log.all == [.done, .done, .undone, .redone, .done, .undone, .undone, .redone, .cleared])
    }

    @Test("action names follow the groups onto the redo stack and back")
    func actionNames() {
        let manager = UndoManager()
        let model = Model(manager)
        #expect(manager.undoActionName == "")
        manager.beginUndoGrouping()
        model.set(1)
        manager.setActionName("Typing")
        manager.endUndoGrouping()
        model.set(2)
        manager.setActionName("Bold")
        #expect(manager.undoActionName == "Bold")
        manager.undo()
        #expect(manager.redoActionName == "Bold")
        #expect(manager.undoActionName == "Typing")
        manager.redo()
        #expect(manager.undoActionName == "Bold")
        #expect(manager.redoActionName == "")
    }

    @Test("disabled registration is ignored, and disabling nests")
    func disabling() {
        let (manager, log, model) = loggedModel()
        manager.disableUndoRegistration()
        manager.disableUndoRegistration()
        model.set(1)
        manager.enableUndoRegistration()
        #expect(!manager.isUndoRegistrationEnabled)
        model.set(2)
        manager.enableUndoRegistration()
        #expect(manager.isUndoRegistrationEnabled)
        manager.enableUndoRegistration()  // unmatched: ignored
        #expect(manager.isUndoRegistrationEnabled)
        #expect(!manager.canUndo)
        #expect(log.all.isEmpty)
        model.set(3)
        manager.undo()
        #expect(model.value == 2)

        // removeAllActions re-enables registration, as Apple's does.
        manager.disableUndoRegistration()
        manager.removeAllActions()
        #expect(manager.isUndoRegistrationEnabled)
    }

    @Test("removeAllActions(withTarget:) removes only that target's actions, and empty groups")
    func removeByTarget() {
        let manager = UndoManager()
        let first = Model(manager), second = Model(manager)
        first.set(1)
        second.set(10)
        manager.beginUndoGrouping()
        first.set(2)
        second.set(20)
        manager.endUndoGrouping()
        manager.removeAllActions(withTarget: first)
        manager.undo()
        #expect(first.value == 2 && second.value == 10)
        manager.undo()
        #expect(second.value == 0)
        #expect(!manager.canUndo)  // the group with only first's action is gone
    }

    @Test("a deallocated target's action is skipped; the undo is still reported")
    func weakTargets() {
        let manager = UndoManager()
        let log = ChangeLog(watching: manager)
        var model: Model? = Model(manager)
        model?.set(1)
        model = nil
        #expect(manager.canUndo)
        manager.undo()
        #expect(!manager.canUndo && !manager.canRedo)
        #expect(log.all == [.done, .undone])
    }

    @Test("state can be read from another thread while the owner edits")
    func crossThreadReads() async {
        let manager = UndoManager()
        let model = Model(manager)
        let reader = Task.detached {
            var seen = 0
            for _ in 0..<2000 where manager.canUndo { seen += 1 }
            return seen
        }
        for value in 1...500 { model.set(value) }
        _ = await reader.value
        #expect(manager.canUndo)
    }
}
