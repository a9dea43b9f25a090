/// The state of a document, as an option set: Apple's `UIDocument.State`.
///
/// An empty set (``normal``) means the document is open, has no conflict, its last save
/// succeeded and it can be edited. A value type: may be created, read and compared on any
/// thread. Nothing here can fail.
public struct DocumentState: OptionSet, Sendable, Hashable, CustomStringConvertible {
    /// The bits of the set (the values below use bits 0 to 4; other bits are kept but unnamed).
    public let rawValue: UInt

    /// Creates a state from its bits. Unknown bits are kept as they are. Never fails.
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// No flag set: the document is open and ready for editing.
    public static let normal: DocumentState = []
    /// The document is not open (before `open` finished, or after `close`).
    public static let closed = DocumentState(rawValue: 1 << 0)
    /// Other versions of the file exist that conflict with the current one and are not resolved.
    public static let inConflict = DocumentState(rawValue: 1 << 1)
    /// The last save failed; the flag is cleared by the next successful save.
    public static let savingError = DocumentState(rawValue: 1 << 2)
    /// Editing is not allowed right now (during a revert or a reload from disk).
    public static let editingDisabled = DocumentState(rawValue: 1 << 3)
    /// A progress object for a load or save in progress is available.
    public static let progressAvailable = DocumentState(rawValue: 1 << 4)

    private static let named: [(DocumentState, String)] = [
        (.closed, "closed"), (.inConflict, "inConflict"), (.savingError, "savingError"),
        (.editingDisabled, "editingDisabled"), (.progressAvailable, "progressAvailable"),
    ]

    /// `"normal"` for the empty set, otherwise the names of the flags in declaration order, e.g.
    /// `"[closed, savingError]"`. Unnamed bits appear as a hexadecimal value (`"0x40"`).
    public var description: String {
        if isEmpty { return "normal" }
        var names: [String] = []
        var rest = rawValue
        for (flag, name) in Self.named where contains(flag) {
            names.append(name)
            rest &= ~flag.rawValue
        }
        if rest != 0 { names.append("0x" + String(rest, radix: 16)) }
        return "[" + names.joined(separator: ", ") + "]"
    }
}
