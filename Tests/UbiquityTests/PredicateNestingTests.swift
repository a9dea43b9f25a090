import Foundation
import FoundationCompatibility
import Testing
import TestSupport
@testable import Ubiquity

/// Deeply nested predicate formats are format errors, never a stack overflow; long but flat
/// ones, and the deepest accepted ones, parse and evaluate on a small stack (issue 16, item 3).
@Suite struct PredicateNestingTests {
    private static let limit = MetadataPredicateParser.maximumNesting
    private static let comparison = "kMDItemFSName == 'a.txt'"

    private func item(_ name: String) -> MetadataItem {
        MetadataItem(id: 1, folderPath: "/cloud/Documents", name: name,
                     stamp: ItemStamp(isFolder: false, size: 1, modified: 0, created: .min, inode: 1), flags: [])
    }

    /// Runs `body` on a thread with a stack of `stackSize` bytes and returns its result (the wait
    /// is a fail-safe; the thread signals when done).
    private func onSmallStack<T: Sendable>(_ stackSize: Int = 512 * 1024, _ body: @escaping @Sendable () -> T) -> T? {
        let result = LockedBox<T>()
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            result.set(body())
            done.signal()
        }
        thread.stackSize = stackSize
        thread.start()
        guard done.wait(timeout: .now() + 120) == .success else { return nil }
        return result.get()
    }

    @Test("5,000 parentheses, 100,000 NOT and 200,000 ! are format errors at the first level too many")
    func tooDeepIsAnError() {
        let formats = [
            String(repeating: "(", count: 5_000) + Self.comparison + String(repeating: ")", count: 5_000),
            String(repeating: "NOT ", count: 100_000) + Self.comparison,
            String(repeating: "!", count: 200_000) + Self.comparison,
            String(repeating: "(NOT ", count: 3_000) + Self.comparison + String(repeating: ")", count: 3_000),
        ]
        let offsets = [Self.limit, Self.limit * 4, Self.limit, Self.limit / 2 * 5]
        for (format, offset) in zip(formats, offsets) {
            let error = #expect(throws: MetadataPredicateFormatError.self) { try MetadataItemPredicate(format: format) }
            #expect(error?.offset == offset)
            #expect(error?.reason.contains("nested too deeply") == true)
        }
        // Apple's initializer: a predicate that matches nothing and says why; a query refuses it.
        // (NSMetadataQuery uses the shared account, which reads its environment once: the
        // fixture must come first, whichever test runs first.)
        SharedUbiquityFixture.setUp()
        for format in formats {
            let predicate = NSPredicate(format: format)
            #expect((predicate.metadataFormatError as? MetadataPredicateFormatError)?.reason.contains("nested too deeply") == true)
            let query = NSMetadataQuery()
            query.predicate = predicate
            #expect(!query.start())
        }
    }

    @Test("the deepest accepted nesting parses and evaluates correctly on a thread with a 512 KiB stack")
    func deepestAcceptedNesting() throws {
        // Each step: `(x OR (y AND NOT …))` — two parentheses and a NOT, with an OR and an AND
        // in between — then `!` up to the limit: the expression is as deep as the limit allows.
        var format = "", closing = ""
        var levels = 0, negations = 0
        while levels + 3 <= Self.limit {
            format += "(kMDItemFSName == 'x' OR (kMDItemFSName != 'y' AND NOT "
            closing += "))"
            levels += 3
            negations += 1
        }
        format += String(repeating: "!", count: Self.limit - levels)
        negations += Self.limit - levels
        #expect(negations % 2 == 0)
        let deepest = format + Self.comparison + closing
        let atLimit = String(repeating: "!", count: Self.limit) + Self.comparison
        let verdicts = onSmallStack { () -> [Bool?] in
            [deepest, atLimit].flatMap { format -> [Bool?] in
                guard let predicate = try? MetadataItemPredicate(format: format) else { return [nil] }
                return [predicate.evaluate(item("a.txt")), predicate.evaluate(item("b.txt")), predicate.evaluate(item("x"))]
            }
        }
        // Deepest: for a name other than x and y each step is `NOT inner`, an even count of them
        // with the `!`s, so a.txt matches and b.txt does not; x matches the outermost OR. At the
        // limit: `limit` `!` around `== 'a.txt'`, also an even count.
        #expect(verdicts == [true, false, true, true, false, false])
    }

    @Test("100,000 comparisons joined by OR or AND (no nesting) parse and evaluate on a small stack")
    func longFlatChains() {
        let terms = 100_000
        let or = (0..<terms).map { "kMDItemFSName == 'f\($0)'" }.joined(separator: " OR ")
        let and = (0..<terms).map { _ in "kMDItemFSName BEGINSWITH 'f'" }.joined(separator: " && ")
        let verdicts = onSmallStack { () -> [Bool] in
            guard let anyOf = try? MetadataItemPredicate(format: or), let allOf = try? MetadataItemPredicate(format: and) else { return [] }
            return [anyOf.evaluate(item("f99999")), anyOf.evaluate(item("g")), allOf.evaluate(item("f1")), allOf.evaluate(item("g"))]
        }
        #expect(verdicts == [true, false, true, false])
        // Apple's initializer too, evaluated through an NSMetadataItem.
        let predicate = NSPredicate(format: or)
        #expect(predicate.metadataFormatError == nil)
    }
}

/// A value set by one thread and read by another after a semaphore.
private final class LockedBox<T: Sendable>: @unchecked Sendable {
    // @unchecked: `value` is guarded by `lock`.
    private let lock = NSLock()
    private var value: T?
    func set(_ newValue: T) { lock.lock(); value = newValue; lock.unlock() }
    func get() -> T? { lock.lock(); defer { lock.unlock() }; return value }
}
