import Foundation
@testable import CloudDocuments

/// The subclass a UIDocument developer writes: plain stored properties — no lock, no
/// `@unchecked Sendable`. It compiles without warnings in Swift 6 mode because the hooks run on
/// the main actor, as the class is; each hook also asserts it at run time.
final class PlainNote: CloudDocument {
    var text = ""
    var loads = 0
    /// What `fileAttributesToWrite(to:for:)` returns.
    var attributes: [FileAttributeKey: any Sendable] = [:]
    /// When set, `handleError` leaves errors the user may see unfinished (a dialog still up).
    var keepsErrorsForTheUser = false
    var finishedErrors: [Bool] = []
    var errorsNoLongerInteractive = 0
    /// Counted by the presenter override (which runs on the presenter queue, hence the lock).
    let changeMessages = Locked(0)

    override func contents(forType typeName: String) throws -> DocumentContents {
        MainActor.assertIsolated()
        dispatchPrecondition(condition: .onQueue(.main))
        return .data(Data(text.utf8))
    }

    override func load(fromContents contents: DocumentContents, ofType typeName: String?) throws {
        MainActor.assertIsolated()
        dispatchPrecondition(condition: .onQueue(.main))
        text = String(decoding: contents.data ?? Data(), as: UTF8.self)
        loads += 1
    }

    override func fileAttributesToWrite(to url: URL, for saveOperation: SaveOperation) throws -> [FileAttributeKey: any Sendable] {
        MainActor.assertIsolated()
        return attributes
    }

    override func handleError(_ error: any Error, userInteractionPermitted: Bool) {
        MainActor.assertIsolated()
        if keepsErrorsForTheUser && userInteractionPermitted { return }
        super.handleError(error, userInteractionPermitted: userInteractionPermitted)
    }

    override func finishedHandlingError(_ error: any Error, recovered: Bool) {
        MainActor.assertIsolated()
        finishedErrors.append(recovered)
        super.finishedHandlingError(error, recovered: recovered)
    }

    override func userInteractionNoLongerPermitted(forError error: any Error) {
        MainActor.assertIsolated()
        errorsNoLongerInteractive += 1
        super.userInteractionNoLongerPermitted(forError: error)
    }

    /// The presenter overrides' calls, in order (they run on the presenter queue, hence the lock).
    let presenterCalls = Locked<[String]>([])

    override func presentedItemDidChange() {
        changeMessages.withLock { $0 += 1 }
        presenterCalls.withLock { $0.append("didChange") }
        super.presentedItemDidChange()
    }

    override func presentedItemDidMove(to newURL: URL) {
        presenterCalls.withLock { $0.append("didMove") }
        super.presentedItemDidMove(to: newURL)
    }

    override func accommodatePresentedItemDeletion(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        presenterCalls.withLock { $0.append("deletion") }
        super.accommodatePresentedItemDeletion(completionHandler: completionHandler)
    }
}

/// The UIKit habit: the subclass itself marked `@MainActor`. Must compile.
@MainActor
final class MainActorNote: CloudDocument {
    var text = ""
    override func contents(forType typeName: String) throws -> DocumentContents { .data(Data(text.utf8)) }
    override func load(fromContents contents: DocumentContents, ofType typeName: String?) throws {
        text = String(decoding: contents.data ?? Data(), as: UTF8.self)
    }
}

/// Overrides the reading and writing steps: reads upper-cased, counts and delegates writes.
final class StepsNote: CloudDocument {
    var text = ""
    let safeWrites = Locked(0)

    override func read(from url: URL) throws {
        dispatchPrecondition(condition: .notOnQueue(.main))
        let data = try Data(contentsOf: url)
        try loadOnMainActor(.data(Data(String(decoding: data, as: UTF8.self).uppercased().utf8)), ofType: nil)
    }

    override func writeContents(_ contents: DocumentContents, andAttributes attributes: [FileAttributeKey: any Sendable]?,
                                safelyTo url: URL, for saveOperation: SaveOperation) throws {
        dispatchPrecondition(condition: .notOnQueue(.main))
        safeWrites.withLock { $0 += 1 }
        try super.writeContents(contents, andAttributes: attributes, safelyTo: url, for: saveOperation)
    }

    override func contents(forType typeName: String) throws -> DocumentContents { .data(Data(text.utf8)) }
    override func load(fromContents contents: DocumentContents, ofType typeName: String?) throws {
        text = String(decoding: contents.data ?? Data(), as: UTF8.self)
    }
}
