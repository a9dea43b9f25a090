import Foundation
import Glibc
public import Ubiquity

/// Apple's `NSUbiquitousKeyValueStore` for Linux: small values shared by every process and device
/// of an app, over Ubiquity's `KeyValueStore` (storage, merging and limits are described there and
/// in Docs/KeyValueStore.md).
///
/// ```swift
/// let store = NSUbiquitousKeyValueStore.default
/// NotificationCenter.default.addObserver(forName: NSUbiquitousKeyValueStore.didChangeExternallyNotification,
///                                        object: store, queue: .main) { note in
///     let reason = note.userInfo?[NSUbiquitousKeyValueStoreChangeReasonKey] as? Int
///     let keys = note.userInfo?[NSUbiquitousKeyValueStoreChangedKeysKey] as? [String]
/// }
/// store.set("blue", forKey: "colour")
/// store.synchronize()
/// ```
///
/// ## Errors
/// As on Apple platforms the setters return nothing. A write Apple refuses is refused here too and
/// changes nothing: over a limit (1 MB per value or in all, 1,024 keys), and also a key over 64
/// bytes of UTF-8 or a value that is not a property-list type (where Apple raises an Objective-C
/// exception). Each refusal posts ``didChangeExternallyNotification`` with
/// `NSUbiquitousKeyValueStoreQuotaViolationChange` and the key, and writes one line to standard
/// error. ``synchronize()`` returns `false` when the changes could not be written (signed out, disk
/// full, …); they stay in memory and the next call tries again.
///
/// ## Threading
/// Every member may be used from any thread. ``didChangeExternallyNotification`` is posted on
/// `NotificationCenter.default` from a private serial background queue (observers added with
/// `queue: nil` run there), with this object as the notification's object.
open class NSUbiquitousKeyValueStore: NSObject, @unchecked Sendable {
    // @unchecked Sendable: `store` is immutable and Sendable; `observation` is written once, in
    // `init`, before the object can be shared, and never read (it only keeps the observer alive).
    private let store: KeyValueStore
    private var observation: KeyValueStoreObservation?

    /// The shared store, over `KeyValueStore.default` (the first configured container of the
    /// ubiquity configuration, this device's identifier).
    open class var `default`: NSUbiquitousKeyValueStore { shared }
    private static let shared = NSUbiquitousKeyValueStore(keyValueStore: .default)

    /// Another object over the same store as ``default`` (Apple's `init()`).
    public override convenience init() {
        self.init(keyValueStore: .default)
    }

    /// An object over `keyValueStore` (for a store of another container or folder).
    public init(keyValueStore: KeyValueStore) {
        store = keyValueStore
        super.init()
        observation = store.addChangeObserver { [weak self] change in
            guard let self else { return }
            NotificationCenter.default.post(name: Self.didChangeExternallyNotification, object: self, userInfo: [
                NSUbiquitousKeyValueStoreChangeReasonKey: change.reason.rawValue,
                NSUbiquitousKeyValueStoreChangedKeysKey: change.changedKeys,
            ])
        }
    }

    /// Posted when keys changed other than by this process: another device (server change, or
    /// initial sync for a device's first keys), another process of this device (server change),
    /// a refused write (quota violation) or an account change.
    public static let didChangeExternallyNotification = NSNotification.Name("NSUbiquitousKeyValueStoreDidChangeExternallyNotification")

    // MARK: Reading

    /// The value of `aKey` as a property-list object, or `nil` when the key is not set. Any thread.
    open func object(forKey aKey: String) -> Any? { store.value(forKey: aKey)?.propertyList }
    /// The string value of `aKey`; `nil` when it is not set or not a string.
    open func string(forKey aKey: String) -> String? { store.string(forKey: aKey) }
    /// The array value of `aKey`; `nil` when it is not set or not an array.
    open func array(forKey aKey: String) -> [Any]? { store.array(forKey: aKey)?.map(\.propertyList) }
    /// The dictionary value of `aKey`; `nil` when it is not set or not a dictionary.
    open func dictionary(forKey aKey: String) -> [String: Any]? { store.dictionary(forKey: aKey)?.mapValues(\.propertyList) }
    /// The data value of `aKey`; `nil` when it is not set or not data.
    open func data(forKey aKey: String) -> Data? { store.data(forKey: aKey) }
    /// The integer value of `aKey` (a Boolean, double or numeric string is converted); 0 otherwise.
    open func longLong(forKey aKey: String) -> Int64 { store.longLong(forKey: aKey) }
    /// The floating-point value of `aKey` (an integer, Boolean or numeric string is converted); 0 otherwise.
    open func double(forKey aKey: String) -> Double { store.double(forKey: aKey) }
    /// The Boolean value of `aKey` (a non-zero number, or a string starting with Y, T or 1–9, is true); `false` otherwise.
    open func bool(forKey aKey: String) -> Bool { store.bool(forKey: aKey) }

    /// Every key and its value, as ``object(forKey:)`` returns them.
    open var dictionaryRepresentation: [String: Any] { store.dictionaryRepresentation.mapValues(\.propertyList) }

    // MARK: Writing

    /// Sets `aKey` to a property-list object (`nil` removes the key).
    open func set(_ anObject: Any?, forKey aKey: String) {
        guard let anObject else { return write(nil, forKey: aKey) }
        do {
            write(try KeyValueStoreValue(propertyList: anObject), forKey: aKey)
        } catch {
            refuse(KeyValueStoreError.notPropertyList(key: aKey, type: Self.typeName(of: error)), forKey: aKey)
        }
    }
    /// Sets `aKey` to a string (`nil` removes it). A write over Apple's limits changes nothing and
    /// posts `didChangeExternallyNotification` with the quota-violation reason.
    open func set(_ aString: String?, forKey aKey: String) { write(aString.map { .string($0) }, forKey: aKey) }
    /// Sets `aKey` to data (`nil` removes it); limits as for strings.
    open func set(_ aData: Data?, forKey aKey: String) { write(aData.map { .data($0) }, forKey: aKey) }
    /// Sets `aKey` to an array of property-list objects (`nil` removes it); a value that is not a
    /// property list, or over the limits, changes nothing and posts the quota-violation reason.
    open func set(_ anArray: [Any]?, forKey aKey: String) { set(anArray as Any?, forKey: aKey) }
    /// Sets `aKey` to a dictionary of property-list objects (`nil` removes it); refused as for arrays.
    open func set(_ aDictionary: [String: Any]?, forKey aKey: String) { set(aDictionary as Any?, forKey: aKey) }
    /// Sets `aKey` to an integer; limits as for strings.
    open func set(_ value: Int64, forKey aKey: String) { write(.integer(value), forKey: aKey) }
    /// Sets `aKey` to a floating-point number; limits as for strings.
    open func set(_ value: Double, forKey aKey: String) { write(.double(value), forKey: aKey) }
    /// Sets `aKey` to a Boolean; limits as for strings.
    open func set(_ value: Bool, forKey aKey: String) { write(.bool(value), forKey: aKey) }

    /// Removes `aKey` (a tombstone, so the removal reaches other devices too). Any thread.
    open func removeObject(forKey aKey: String) { write(nil, forKey: aKey) }

    /// Writes this process's changes to disk and reads the other processes' and devices'
    /// (blocking). Returns `false` when the changes could not be written; they stay pending.
    @discardableResult
    open func synchronize() -> Bool {
        do {
            try store.synchronize()
            return true
        } catch {
            Self.log("synchronize failed: \(error.errorDescription ?? "\(error)")")
            return false
        }
    }

    private func write(_ value: KeyValueStoreValue?, forKey aKey: String) {
        do { try store.set(value, forKey: aKey) } catch {
            // The store has posted the quota-violation change already.
            Self.log(error.errorDescription ?? "\(error)")
        }
    }

    /// A value that is not a property list: refused like a write over a limit (the change reaches
    /// every observer of the store, on its notification queue).
    private func refuse(_ error: KeyValueStoreError, forKey aKey: String) {
        Self.log(error.errorDescription ?? "\(error)")
        store.notify([KeyValueStoreChange(reason: .quotaViolationChange, changedKeys: [aKey])])
    }

    private static func typeName(of error: KeyValueStoreError) -> String {
        if case .notPropertyList(_, let type) = error { return type }
        return "\(error)"
    }

    private static func log(_ message: String) {
        let line = "NSUbiquitousKeyValueStore: \(message)\n"
        FileHandle.standardError.write(Data(line.utf8))
    }
}

/// The `userInfo` key of ``NSUbiquitousKeyValueStore/didChangeExternallyNotification`` holding the
/// reason (an `Int`: one of the four constants below).
public let NSUbiquitousKeyValueStoreChangeReasonKey = "NSUbiquitousKeyValueStoreChangeReasonKey"
/// The `userInfo` key holding the changed keys (`[String]`).
public let NSUbiquitousKeyValueStoreChangedKeysKey = "NSUbiquitousKeyValueStoreChangedKeysKey"

/// Another device (or another process of this device) changed the keys.
public var NSUbiquitousKeyValueStoreServerChange: Int { 0 }
/// The first keys received from a device whose writes this process had not seen.
public var NSUbiquitousKeyValueStoreInitialSyncChange: Int { 1 }
/// A write was refused for going over a limit; nothing changed.
public var NSUbiquitousKeyValueStoreQuotaViolationChange: Int { 2 }
/// The ubiquity account (root or container) changed.
public var NSUbiquitousKeyValueStoreAccountChange: Int { 3 }
