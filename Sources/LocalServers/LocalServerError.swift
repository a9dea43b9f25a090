/// Why a local server could not be set up or started (the message says what failed).
package struct LocalServerError: Error, CustomStringConvertible {
    package let description: String

    package init(_ description: String) {
        self.description = description
    }
}
