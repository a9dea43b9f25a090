/// A path inside a ``RemoteStore``'s root: relative, `/`-separated components, none of them empty,
/// `.` or `..`, none containing `/` or NUL. Built only through the validating initializers, so a
/// value of this type can never name something outside the root.
public struct RemotePath: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The components, root first. Empty for the root itself.
    public let components: [String]

    /// The root of the store.
    public static let root = RemotePath(validated: [])

    /// The path made of `components`, or `nil` when one of them is empty, `.`, `..`, or contains
    /// `/` or NUL.
    public init?<Components: Sequence>(components: Components) where Components.Element == String {
        var checked: [String] = []
        for component in components {
            guard Self.isValidComponent(component) else { return nil }
            checked.append(component)
        }
        self.components = checked
    }

    /// The path for a `/`-separated relative string (`"Documents/a.txt"`); `nil` when it is
    /// absolute or a component is invalid. `""` is the root.
    public init?(_ string: String) {
        if string.isEmpty { self = .root; return }
        guard !string.hasPrefix("/") else { return nil }
        self.init(components: string.split(separator: "/", omittingEmptySubsequences: false).map(String.init))
    }

    private init(validated: [String]) { components = validated }

    /// Whether `component` may be one component of a path.
    public static func isValidComponent(_ component: String) -> Bool {
        !component.isEmpty && component != "." && component != ".."
            && !component.utf8.contains(UInt8(ascii: "/")) && !component.utf8.contains(0)
    }

    /// The path of the item named `name` inside this folder (`nil` when `name` is invalid).
    public func appending(_ name: String) -> RemotePath? {
        guard Self.isValidComponent(name) else { return nil }
        return RemotePath(validated: components + [name])
    }

    /// The folder that holds this item (`nil` for the root).
    public var parent: RemotePath? { components.isEmpty ? nil : RemotePath(validated: Array(components.dropLast())) }

    /// The last component (`""` for the root).
    public var name: String { components.last ?? "" }

    /// Whether this is the root.
    public var isRoot: Bool { components.isEmpty }

    /// Whether `self` is `other` or inside it.
    public func isInside(_ other: RemotePath) -> Bool { components.starts(with: other.components) }

    /// The `/`-separated form (`""` for the root).
    public var description: String { components.joined(separator: "/") }

    public static func < (lhs: RemotePath, rhs: RemotePath) -> Bool { lhs.components.lexicographicallyPrecedes(rhs.components) }
}
