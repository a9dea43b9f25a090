import ManagedDocuments

/// The schema of the crash tests' store, declared once: the test target uses it too
/// (`TestSchemas.items`, through `@testable import ManagedDocumentTestHelper`), so a helper
/// process and the test that checks its store always agree.
enum HelperSchema {
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
}
