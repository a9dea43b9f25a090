import Foundation
import Synchronization
@testable import ManagedDocuments

/// The schemas the tests use.
enum TestSchemas {
    static let items = ManagedSchema(version: 1, entities: [
        EntityDescription("Item", attributes: [
            AttributeDescription("title", .string, optional: false, default: ""),
            AttributeDescription("count", .integer, optional: false, default: 0),
            AttributeDescription("done", .bool, optional: false, default: false),
            AttributeDescription("note", .string),
        ]),
        EntityDescription("Setting", attributes: [
            AttributeDescription("key", .string, optional: false, unique: true),
            AttributeDescription("value", .integer),
        ]),
    ])

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
