import Foundation

/// What a change log carries for one record: the registers one save wrote (or, in a baseline,
/// every register the record has).
///
/// The record's existence is a register too, named ``existence`` (not an identifier, so it
/// cannot clash with an attribute), holding `true` (inserted) or `false` (deleted).
public struct RecordChange: Sendable, Hashable {
    /// The name of the existence register.
    public static let existence = "$exists"

    public var entity: String
    public var id: UUID
    /// The written registers by attribute name (and ``existence``).
    public var registers: [String: Register]

    public init(entity: String, id: UUID, registers: [String: Register]) {
        self.entity = entity
        self.id = id
        self.registers = registers
    }
}
