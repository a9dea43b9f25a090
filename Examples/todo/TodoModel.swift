import ManagedDocuments

/// The book's to-do list: one entity, `Task`.
enum TodoModel {
    static let schema = ManagedSchema(version: 1, entities: [
        EntityDescription("Task", attributes: [
            AttributeDescription("title", .string, optional: false, default: ""),
            AttributeDescription("done", .bool, optional: false, default: false),
            AttributeDescription("created", .date),
        ]),
    ])

    /// `[ ] 1a2b3c4d  Buy milk`: a task as `list` and `watch` print it (the short id is what
    /// `done` takes).
    static func line(_ record: ManagedRecord) -> String {
        let mark = record["done"] == .bool(true) ? "[x]" : "[ ]"
        return "\(mark) \(shortID(record.objectID))  \(record["title"].stringValue ?? "")"
    }

    static func shortID(_ id: ManagedObjectID) -> String { String(id.uuid.uuidString.lowercased().prefix(8)) }
}
