// FoundationCompatibility: Apple's coordination names (`NSFileCoordinator`, `NSFilePresenter`,
// `NSFileAccessIntent`, …) for code written for Apple platforms, over the FileCoordination module,
// and `NSFileVersion` over CloudDocuments' `FileVersion` (imported internally, not re-exported).
//
// Importing this module also imports Foundation, so a file that needs both can name just this one.
// It does not re-export FileCoordination: code written against Apple's names never needs
// `Coordinator` or `FilePresenter`, and keeping those generic names out of its scope avoids clashes
// with the app's own types. Import FileCoordination (or CloudDocuments) as well to use both.
@_exported import Foundation

/// Apple's name for the type of an `error:` out-parameter, as swift-corelibs-foundation (which has
/// no `AutoreleasingUnsafeMutablePointer`) lacks it.
///
/// Callers write exactly what they write on Apple platforms: `var error: NSError?` and
/// `error: &error`, or `error: nil` when they do not want the error. Functions of your own that
/// declare an `error: NSErrorPointer` parameter and set `error?.pointee` compile unchanged too.
public typealias NSErrorPointer = UnsafeMutablePointer<NSError?>?
