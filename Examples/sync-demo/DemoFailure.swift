/// Why the demo stopped (the message says what failed and, when it helps, what to do).
struct DemoFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
