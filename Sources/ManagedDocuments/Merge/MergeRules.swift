/// The merge rules, in one place (Docs/ManagedDocument.md, "Merge rules", explains them with
/// examples).
///
/// A record is a set of registers — one per attribute, plus its existence — and every change
/// is a set of register writes stamped with a ``HybridTimestamp``. Merging keeps, per register,
/// the write with the greatest timestamp (milliseconds, then counter, then device id). That is
/// a maximum: commutative, associative and idempotent, so any devices that have applied the same
/// changes hold the same registers, whatever the order, the duplicates or the delays.
///
/// - **Per attribute, the later write wins.** Two devices changing different attributes of one
///   record both keep their change; changing the same attribute, the later timestamp wins, and on
///   equal times the greater device id.
/// - **Delete against a concurrent update: the delete wins.** An update writes attribute
///   registers only, never the existence register, so it does not bring a deleted record back;
///   its values are kept in the tombstone (not lost) and show again only if the record is
///   inserted again. Only an insert (existence `true`) later than the delete revives a record.
/// - **Unique attributes merge instead of duplicating.** A record of an entity with a unique
///   attribute takes its identifier from the entity and the value (``UniqueIdentity``), so two
///   devices inserting the same "singleton" insert the same record, whose attributes then merge
///   as above.
/// - **Updates may arrive before their insert** (logs arrive in any order): the record exists in
///   the store but stays invisible until an insert's existence write arrives.
public enum MergeRules {
    /// Whether a write stamped `incoming` replaces the register currently stamped `current`.
    /// Equal stamps are the same write (applied twice): nothing changes.
    public static func incomingWins(_ incoming: HybridTimestamp, over current: HybridTimestamp) -> Bool {
        current < incoming
    }
}
