import Foundation
import Synchronization
@testable import ManagedDocuments
@testable import ManagedDocumentTestHelper

/// The schemas the tests use.
enum TestSchemas {
    /// The crash tests' helper process uses the same schema: it is declared there, once.
    static let items = HelperSchema.items

    /// The same entities one version later, with one more attribute.
    static let itemsVersion2 = ManagedSchema(version: 2, entities: [
        EntityDescription("Item", attributes: items.entities[0].attributes + [AttributeDescription("priority", .integer)]),
        items.entities[1],
    ])
}

/// A wall clock the test moves: each reading advances it by `step` milliseconds from `start`
/// (devices given different starts have skewed clocks).
final class SteppingWallClock: Sendable {
    private let value: Atomic<UInt64>
    private let step: UInt64

    init(start: UInt64, step: UInt64 = 1) {
        value = Atomic(start)
        self.step = step
    }

    var now: @Sendable () -> UInt64 { { [self] in value.add(step, ordering: .relaxed).newValue } }
}
