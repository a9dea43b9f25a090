import Foundation

/// The changes of a log in the making, encoded as they are made (format 2 of
/// ``ChangeLogFile``): the name table and the changes' bytes. A store appends each local change
/// here as it applies it, so a save only frames these bytes (header, names, checksum) instead of
/// keeping every change as values until then and encoding them all at once; a baseline is
/// built the same way from the store's records.
///
/// A value type; its owner serializes access (the ``RecordStore``, under its synchronizer's lock).
struct PendingLog {
    /// The number of changes appended.
    private(set) var count = 0
    /// Names in index order: entities, attributes, devices.
    private(set) var names: [String] = []
    private var index: [String: UInt32] = [:]
    /// The changes' bytes (without their count, which the file puts first).
    private(set) var body = LogWriter()
    /// Most registers of a log were written by one device, most changes are of one entity: kept
    /// at hand (comparing equal strings, or two references, is cheaper than hashing).
    private var lastDevice: (name: String, index: UInt32)?
    private var lastPlan: (plan: EntityPlan, entity: UInt32, registers: [UInt32])?

    var isEmpty: Bool { count == 0 }

    private mutating func name(_ text: String) -> UInt32 {
        if let known = index[text] { return known }
        let made = UInt32(names.count)
        names.append(text)
        index[text] = made
        return made
    }

    private mutating func deviceIndex(_ text: String) -> UInt32 {
        if let last = lastDevice, last.name == text { return last.index }
        let made = name(text)
        lastDevice = (text, made)
        return made
    }

    /// The name indices of `plan`'s entity and registers.
    private mutating func indices(of plan: EntityPlan) -> (entity: UInt32, registers: [UInt32]) {
        if let lastPlan, lastPlan.plan === plan { return (lastPlan.entity, lastPlan.registers) }
        let made = (entity: name(plan.entity.name), registers: plan.names.map { name($0) })
        lastPlan = (plan, made.entity, made.registers)
        return made
    }

    /// A change's start: entity, record, its clock, its register count.
    private mutating func begin(entity: UInt32, id: UUID, clock: HybridTimestamp, registers: Int) {
        count += 1
        body.varint(UInt64(entity))
        body.uuid(id)
        body.u64(clock.packed)
        body.varint(UInt64(deviceIndex(clock.device)))
        body.varint(UInt64(registers))
    }

    /// An insert (or any write of every register with one clock): `values` in `plan`'s order,
    /// all written at `stamp`.
    mutating func appendRow(plan: EntityPlan, id: UUID, stamp: HybridTimestamp, values: [AttributeValue]) {
        let indices = indices(of: plan)
        // The usual row (a few short values) is encoded through a pointer in one piece; a row
        // with large strings or data byte by byte.
        var bound = 4 * 10 + 16 + 8
        for value in values { bound += 10 + ByteCursor.compactBound(value) }
        if bound <= Self.largestRowEncodedAtOnce {
            let device = deviceIndex(stamp.device)
            let encoded = body.appendEncoded(maximum: bound) { cursor in
                cursor.varint(UInt64(indices.entity))
                cursor.uuid(id)
                cursor.u64(stamp.packed)
                cursor.varint(UInt64(device))
                cursor.varint(UInt64(values.count))
                for position in values.indices {
                    cursor.varint(UInt64(indices.registers[position]) << 1)
                    cursor.compactValue(values[position])
                }
            }
            if encoded {
                count += 1
                return
            }
        }
        begin(entity: indices.entity, id: id, clock: stamp, registers: values.count)
        for (position, value) in values.enumerated() {
            body.varint(UInt64(indices.registers[position]) << 1)
            body.compactValue(value)
        }
    }

    /// The largest row (bytes, bounded) ``appendRow(plan:id:stamp:values:)`` encodes in a scratch buffer.
    static let largestRowEncodedAtOnce = 2048

    /// Any change: its registers in name order, each with its own clock only when it is not the
    /// first register's.
    mutating func append(_ change: RecordChange) {
        let sorted = change.registers.sorted { $0.key < $1.key }
        let base = sorted.first?.value.timestamp ?? .zero
        begin(entity: name(change.entity), id: change.id, clock: base, registers: sorted.count)
        for (attribute, register) in sorted {
            let own = register.timestamp.packed != base.packed || register.timestamp.device != base.device
            body.varint(UInt64(name(attribute)) << 1 | (own ? 1 : 0))
            body.compactValue(register.value)
            if own {
                body.u64(register.timestamp.packed)
                body.varint(UInt64(deviceIndex(register.timestamp.device)))
            }
        }
    }
}
