/// The results in one folder, by name: the items in an array, and a dictionary from name to the
/// item's slot in it. Half the memory of a `[String: MetadataItem]` (a dictionary keeps at least a
/// quarter of its buckets empty, and a slot number is 4 bytes where an item is 80). A removed
/// item's slot is reused by the next item put in. Owned by one query's thread; a value.
struct FolderItems {
    /// By exact bytes (``ExactName``): two names that differ only in Unicode normalization are two items.
    private var slots: [ExactName: Int32] = [:]
    private var items: [MetadataItem] = []
    private var free: [Int32] = []

    init() {}

    /// A folder holding `items` (of distinct names), as the initial gathering found them.
    init(gathered items: [MetadataItem]) {
        self.items = items
        slots.reserveCapacity(items.count)
        for (slot, item) in items.enumerated() { slots[ExactName(item.name)] = Int32(slot) }
    }

    var count: Int { slots.count }
    var isEmpty: Bool { slots.isEmpty }

    subscript(name: String) -> MetadataItem? {
        slots[ExactName(name)].map { items[Int($0)] }
    }

    /// Puts `item` in under its name; returns the item it replaced.
    mutating func updateValue(_ item: MetadataItem) -> MetadataItem? {
        let key = ExactName(item.name)
        if let slot = slots[key] {
            defer { items[Int(slot)] = item }
            return items[Int(slot)]
        }
        if let slot = free.popLast() {
            items[Int(slot)] = item
            slots[key] = slot
        } else {
            slots[key] = Int32(items.count)
            items.append(item)
        }
        return nil
    }

    mutating func removeValue(forKey name: String) -> MetadataItem? {
        guard let slot = slots.removeValue(forKey: ExactName(name)) else { return nil }
        free.append(slot)
        return items[Int(slot)]
    }

    /// The items, in no particular order.
    var all: [MetadataItem] {
        slots.values.map { items[Int($0)] }
    }

    var names: [String] { slots.keys.map(\.string) }
}
