import SystemSupport

/// A file name or path (a lossless path string) as a dictionary key that compares bytes. Swift's
/// `String` equality and hashing follow canonical equivalence, so a composed and a decomposed "é"
/// would be one key — but they are two different names on Linux, and a folder may hold both.
struct ExactName: Hashable, Sendable {
    let string: String

    init(_ string: String) {
        self.string = string
    }

    static func == (left: ExactName, right: ExactName) -> Bool {
        PathBytes.haveSameBytes(left.string, right.string)
    }

    func hash(into hasher: inout Hasher) {
        var string = string
        string.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}
