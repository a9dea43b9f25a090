import Foundation
@_exported import struct SystemSupport.Errno
import SystemSupport

// Errors as values: one errno type (`Errno`, re-exported from here), and one way to ask an error
// what it was caused by, whatever layer it came through.

/// An error that can say which system error number it carries and which error caused it.
///
/// Every public error of the package conforms: ``CoordinationError``, and in the layers above
/// `DocumentError`, `FileVersionError`, `UbiquityError` and `KeyValueStoreError`. A protocol
/// (rather than one function that knows every error type) because each layer's errors live in
/// their own module, which FileCoordination cannot see: each type answers for itself, and
/// ``Swift/Error/underlyingErrno`` and ``Swift/Error/isCoordinationTimeout`` walk the chain.
/// Your own errors may conform too, so the same questions reach through them.
public protocol UnderlyingErrorCarrying: Error {
    /// The system error number this error itself carries, if any (not its cause's).
    var errno: Errno? { get }
    /// The error this one was caused by, kept as a value, if any.
    var underlyingError: (any Error)? { get }
}

extension UnderlyingErrorCarrying {
    /// No cause, by default.
    public var underlyingError: (any Error)? { nil }
}

extension Error {
    /// This error followed by the errors it was caused by, outermost first: the
    /// ``UnderlyingErrorCarrying/underlyingError`` of each, or an `NSError`'s
    /// `NSUnderlyingErrorKey`. At most 16 deep (a cycle of `NSError`s cannot loop for ever).
    public var errorChain: [any Error] {
        var chain: [any Error] = [self]
        while chain.count < 16, let next = cause(of: chain[chain.count - 1]) { chain.append(next) }
        return chain
    }

    /// The system error number behind this error, whatever layer it came through: the first one
    /// carried along ``errorChain`` — an ``Errno`` thrown as is, an error's
    /// ``UnderlyingErrorCarrying/errno``, or an `NSError` of `NSPOSIXErrorDomain`.
    ///
    /// ```swift
    /// do { try await document.saveThrowing(to: url, for: .forOverwriting) } catch {
    ///     if error.underlyingErrno == .noSpace { /* ask the user to free some space */ }
    /// }
    /// ```
    ///
    /// `nil` when no layer kept a number (a cancelled coordination, contents that do not load).
    public var underlyingErrno: Errno? {
        for error in errorChain {
            if let number = error as? Errno { return number }
            if let failure = error as? SystemCallError { return failure.errno }
            if let carrier = error as? any UnderlyingErrorCarrying {
                if let number = carrier.errno { return number }
                continue
            }
            let bridged = error as NSError
            if bridged.domain == NSPOSIXErrorDomain, let code = Int32(exactly: bridged.code) { return Errno(rawValue: code) }
        }
        return nil
    }

    /// Whether this error, or one it was caused by, is a coordination that timed out
    /// (``CoordinationError/timedOut``): another reader, writer or presenter held the item for
    /// longer than ``Coordinator/timeout``. Trying again later may work.
    public var isCoordinationTimeout: Bool {
        errorChain.contains { ($0 as? CoordinationError)?.isTimedOut == true }
    }

    /// The first error of type `type` along ``errorChain`` (this error included), if any; for
    /// example `error.underlyingError(ofType: CoordinationError.self)`.
    public func underlyingError<E: Error>(ofType type: E.Type) -> E? {
        for error in errorChain { if let match = error as? E { return match } }
        return nil
    }

}

/// What `error` was caused by: its ``UnderlyingErrorCarrying/underlyingError``, or an `NSError`'s
/// `NSUnderlyingErrorKey`.
private func cause(of error: any Error) -> (any Error)? {
    if error is Errno || error is SystemCallError { return nil }
    if let carrier = error as? any UnderlyingErrorCarrying { return carrier.underlyingError }
    return (error as NSError).userInfo[NSUnderlyingErrorKey] as? any Error
}

extension CoordinationError {
    fileprivate var isTimedOut: Bool { if case .timedOut = self { true } else { false } }

    /// The error a `coordinate` call threw, as a `CoordinationError`, for callers whose accessor
    /// throws nothing (so every error is one already). Anything else could only come from an
    /// accessor; it is kept, not flattened, as the underlying error of ``presenterFailed(_:)``.
    package init(thrownByCoordinating error: any Error) {
        self = error as? CoordinationError ?? .presenterFailed(error)
    }
}

/// Whether two errors kept as values are the same, for the `Equatable` conformances of errors
/// that carry another error (``CoordinationError/presenterFailed(_:)``, `KeyValueStoreError`'s
/// `writeFailed`): of the same type, and reading the same in full (`String(reflecting:)`, which
/// spells out every associated value). Not `==` through `any Equatable`: on Linux every error
/// converts to `NSError`, so that cast always succeeds and would compare bridged objects.
package func errorsAreEqual(_ lhs: any Error, _ rhs: any Error) -> Bool {
    type(of: lhs) == type(of: rhs) && String(reflecting: lhs) == String(reflecting: rhs)
}
