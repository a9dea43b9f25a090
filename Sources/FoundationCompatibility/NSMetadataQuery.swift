import Foundation
internal import Ubiquity

// Apple's scope constants, notification names and update keys (the strings are Apple's).
/// The `Documents` folders of the app's containers.
public let NSMetadataQueryUbiquitousDocumentsScope = "NSMetadataQueryUbiquitousDocumentsScope"
/// The app's containers, except their `Documents` folders.
public let NSMetadataQueryUbiquitousDataScope = "NSMetadataQueryUbiquitousDataScope"
/// The key of the added `[NSMetadataItem]` in a did-update notification's `userInfo`.
public let NSMetadataQueryUpdateAddedItemsKey = "kMDQueryUpdateAddedItems"
/// The key of the changed `[NSMetadataItem]` in a did-update notification's `userInfo`.
public let NSMetadataQueryUpdateChangedItemsKey = "kMDQueryUpdateChangedItems"
/// The key of the removed `[NSMetadataItem]` in a did-update notification's `userInfo`.
public let NSMetadataQueryUpdateRemovedItemsKey = "kMDQueryUpdateRemovedItems"

extension NSNotification.Name {
    /// Posted on the query's `operationQueue` when the initial walk begins.
    public static let NSMetadataQueryDidStartGathering = NSNotification.Name("NSMetadataQueryDidStartGatheringNotification")
    /// Posted while gathering, at most every 250 ms, with the results found so far.
    public static let NSMetadataQueryGatheringProgress = NSNotification.Name("NSMetadataQueryGatheringProgressNotification")
    /// Posted once the initial results are complete.
    public static let NSMetadataQueryDidFinishGathering = NSNotification.Name("NSMetadataQueryDidFinishGatheringNotification")
    /// Posted for each batch of live changes, with the added, changed and removed items in `userInfo`.
    public static let NSMetadataQueryDidUpdate = NSNotification.Name("NSMetadataQueryDidUpdateNotification")
}

/// Apple's `NSMetadataQuery` for ubiquity containers and folders, over Ubiquity's `MetadataQuery`
/// (Docs/MetadataQuery.md has the model, the guarantees and the limits).
///
/// ```swift
/// let query = NSMetadataQuery()
/// query.searchScopes = [NSMetadataQueryUbiquitousDocumentsScope]
/// query.predicate = NSPredicate(format: "%K LIKE %@", NSMetadataItemFSNameKey, "*.txt")
/// NotificationCenter.default.addObserver(forName: .NSMetadataQueryDidUpdate, object: query, queue: nil) { note in
///     let added = note.userInfo?[NSMetadataQueryUpdateAddedItemsKey] as? [NSMetadataItem] ?? []
/// }
/// query.start()
/// ```
///
/// ## Differences from Apple platforms
/// - `start()` returns false (instead of raising) for a predicate format outside the supported
///   subset, an unknown sort key, or a search scope it cannot use; `startError` says why.
/// - `result(at:)` answers `NSNull()` for an index out of range (Apple raises).
/// - A `nil` predicate matches every item (Apple requires one).
/// - Spotlight's other scopes (user home, local computer, network) and `valueListAttributes`,
///   `groupingAttributes`, `searchItems` and the delegate are not supported.
///
/// ## Threading
/// Every member may be called from any thread. The notifications are posted on `operationQueue`
/// (the main queue when nil) with the query as their object; `results` and `resultCount` change
/// only just before a notification is posted.
open class NSMetadataQuery: NSObject, @unchecked Sendable {
    // @unchecked Sendable: the configuration, the running query and the item objects are behind
    // `lock`; the running `MetadataQuery` is Sendable.
    private let lock = NSLock()
    private var _predicate: NSPredicate?
    private var _sortDescriptors: [NSSortDescriptor] = []
    private var _searchScopes: [Any] = []
    private var _batching: TimeInterval = 1.0
    private var _operationQueue: OperationQueue?
    private var running: MetadataQuery?
    private var items: [UInt64: NSMetadataItem] = [:]
    private var _startError: (any Error)?

    /// The account whose containers the ubiquitous scopes stand for (`UbiquityAccount.shared`).
    override public init() {}

    private func locked<T>(_ body: () -> T) -> T {
        lock.lock(); defer { lock.unlock() }
        return body()
    }

    /// Which items are results: a predicate from `NSPredicate(format:)` (the metadata subset) or
    /// `NSPredicate(block:)` (called with an `NSMetadataItem`, on the query's thread). Read at `start()`.
    open var predicate: NSPredicate? {
        get { locked { _predicate } }
        set { locked { _predicate = newValue } }
    }
    /// The order of `results`: descriptors with a `key` among the `NSMetadataItem…Key` constants.
    open var sortDescriptors: [NSSortDescriptor] {
        get { locked { _sortDescriptors } }
        set { locked { _sortDescriptors = newValue } }
    }
    /// `NSMetadataQueryUbiquitousDocumentsScope`, `NSMetadataQueryUbiquitousDataScope`, and folder
    /// file `URL`s or absolute paths (any other URL makes `start()` return false). Empty: both
    /// ubiquitous scopes.
    open var searchScopes: [Any] {
        get { locked { _searchScopes } }
        set { locked { _searchScopes = newValue } }
    }
    /// Seconds during which changes are collected into one did-update notification (default 1).
    open var notificationBatchingInterval: TimeInterval {
        get { locked { _batching } }
        set { locked { _batching = newValue } }
    }
    /// Where the notifications are posted (nil: the main queue).
    open var operationQueue: OperationQueue? {
        get { locked { _operationQueue } }
        set { locked { _operationQueue = newValue } }
    }
    /// Why the last `start()` returned false, or nil. (Not in Apple's API.)
    open var startError: (any Error)? { locked { _startError } }

    /// Starts gathering and then live updates; false when the query is running or its settings
    /// cannot be used (see `startError`).
    @discardableResult
    open func start() -> Bool {
        let (predicateObject, descriptors, scopeObjects, batching, queue) = locked {
            (_predicate, _sortDescriptors, _searchScopes, _batching, _operationQueue)
        }
        do {
            let predicate = try Self.predicate(from: predicateObject)
            let sortKeys = try descriptors.map { descriptor throws(MetadataQueryStartError) -> MetadataQuerySortKey in
                guard let key = descriptor.metadataQueryKey, let attribute = MetadataItemAttribute(rawValue: key) else {
                    throw .unknownSortKey(descriptor.metadataQueryKey ?? "(not made with NSSortDescriptor(key:ascending:))")
                }
                return MetadataQuerySortKey(attribute, ascending: descriptor.ascending)
            }
            let scopes = try Self.scopes(from: scopeObjects)
            let query = MetadataQuery(scopes: scopes, predicate: predicate, sortKeys: sortKeys,
                                      notificationBatchingInterval: batching, operationQueue: queue) { [weak self] event in
                self?.post(event)
            }
            let started: Bool = locked {
                if running?.isStarted == true { return false }
                running = query
                items = [:]
                _startError = nil
                return true
            }
            guard started else { throw MetadataQueryError.alreadyStarted }
            try query.start()
            return true
        } catch {
            locked { _startError = error }
            return false
        }
    }

    /// Stops gathering and live updates; the results stay.
    open func stop() { locked { running }?.stop() }
    /// Whether the query was started and not stopped. Any thread.
    open var isStarted: Bool { locked { running }?.isStarted ?? false }
    /// Whether the initial walk of the scopes is still running.
    open var isGathering: Bool { locked { running }?.isGathering ?? false }
    /// Whether `stop()` was called since the last start.
    open var isStopped: Bool { locked { running }?.isStopped ?? false }
    /// Holds back updates until the matching `enableUpdates()` (calls nest).
    open func disableUpdates() { locked { running }?.disableUpdates() }
    /// Ends one `disableUpdates()`; the held updates are delivered (in order) when the last one ends.
    open func enableUpdates() { locked { running }?.enableUpdates() }

    /// The results (`NSMetadataItem`s) as of the last notification.
    open var results: [Any] {
        guard let query = locked({ running }) else { return [] }
        return query.results.map { object(for: $0) }
    }
    /// The number of results as of the last notification (0 before `start()`).
    open var resultCount: Int { locked { running }?.resultCount ?? 0 }

    /// The result (an `NSMetadataItem`) at `idx`; `NSNull()` when out of range (Apple raises).
    open func result(at idx: Int) -> Any {
        guard let item = locked({ running })?.result(at: idx) else { return NSNull() }
        return object(for: item)
    }

    /// The index of `result` (an `NSMetadataItem` of this query) in `results`, or `NSNotFound`.
    open func index(ofResult result: Any) -> Int {
        guard let object = result as? NSMetadataItem, let query = locked({ running }) else { return NSNotFound }
        let id = object.item.id
        guard locked({ items[id] }) === object else { return NSNotFound }
        return query.index(ofResultWithID: id) ?? NSNotFound
    }

    /// The value of attribute `attrName` of the result at `idx`, or nil.
    open func value(ofAttribute attrName: String, forResultAt idx: Int) -> Any? {
        guard let attribute = MetadataItemAttribute(rawValue: attrName),
              let item = locked({ running })?.result(at: idx) else { return nil }
        return item.value(of: attribute)
    }

    // MARK: Bridging

    private func object(for item: MetadataItem) -> NSMetadataItem {
        locked {
            if let object = items[item.id] { return object }
            let object = NSMetadataItem(item)
            items[item.id] = object
            return object
        }
    }

    /// On the operation queue: brings the item objects up to date and posts the notification.
    private func post(_ event: MetadataQueryEvent) {
        let name: NSNotification.Name
        var userInfo: [AnyHashable: Any]?
        switch event {
        case .didStartGathering: name = .NSMetadataQueryDidStartGathering
        case .gatheringProgress: name = .NSMetadataQueryGatheringProgress
        case .didFinishGathering: name = .NSMetadataQueryDidFinishGathering
        case .didUpdate(let update):
            name = .NSMetadataQueryDidUpdate
            let (added, changed, removed) = locked { () -> ([NSMetadataItem], [NSMetadataItem], [NSMetadataItem]) in
                let changed = update.changed.map { item -> NSMetadataItem in
                    if let object = items[item.id] { object.update(item); return object }
                    let object = NSMetadataItem(item); items[item.id] = object; return object
                }
                let removed = update.removed.map { item in items.removeValue(forKey: item.id) ?? NSMetadataItem(item) }
                let added = update.added.map { item -> NSMetadataItem in
                    let object = NSMetadataItem(item); items[item.id] = object; return object
                }
                return (added, changed, removed)
            }
            userInfo = [NSMetadataQueryUpdateAddedItemsKey: added, NSMetadataQueryUpdateChangedItemsKey: changed,
                        NSMetadataQueryUpdateRemovedItemsKey: removed]
        }
        NotificationCenter.default.post(name: name, object: self, userInfo: userInfo)
    }

    private static func predicate(from object: NSPredicate?) throws -> MetadataItemPredicate {
        guard let object else { return .all }
        if let parsed = object.metadataFormatParse { return try parsed.get() }
        let box = PredicateBox(predicate: object)
        return MetadataItemPredicate { item in box.predicate.evaluate(with: NSMetadataItem(item)) }
    }

    private static func scopes(from objects: [Any]) throws(MetadataQueryStartError) -> [MetadataQueryScope] {
        if objects.isEmpty { return [.ubiquitousDocuments, .ubiquitousData] }
        return try objects.map { object throws(MetadataQueryStartError) -> MetadataQueryScope in
            // Only file URLs: the path of another URL ("https://host/" is "/") is not a folder to search.
            if let url = object as? URL {
                guard url.isFileURL else { throw .unsupportedScope(url.absoluteString) }
                return .folder(url)
            }
            if let url = object as? NSURL {
                guard url.isFileURL, let path = url.path else { throw .unsupportedScope(url.absoluteString) }
                return .folder(URL(fileURLWithPath: path))
            }
            let text = (object as? String) ?? (object as? NSString).map { String(describing: $0) }
            switch text {
            case NSMetadataQueryUbiquitousDocumentsScope: return .ubiquitousDocuments
            case NSMetadataQueryUbiquitousDataScope: return .ubiquitousData
            case let path? where path.hasPrefix("/"): return .folder(URL(fileURLWithPath: path))
            default: throw .unsupportedScope(String(describing: object))
            }
        }
    }
}

/// An `NSPredicate(block:)` a query calls from its own thread.
private struct PredicateBox: @unchecked Sendable {
    // @unchecked: an NSPredicate is immutable once made; its block is the caller's responsibility
    // (documented on `NSMetadataQuery.predicate`: called on the query's thread).
    let predicate: NSPredicate
}

/// Why `NSMetadataQuery.start()` returned false (besides the predicate's format error).
enum MetadataQueryStartError: Error, LocalizedError {
    case unknownSortKey(String)
    case unsupportedScope(String)

    var errorDescription: String? {
        switch self {
        case .unknownSortKey(let key): "The sort key \(key) is not a metadata attribute this query knows (use the NSMetadataItem…Key constants)."
        case .unsupportedScope(let scope): "The search scope \(scope) is not supported: use NSMetadataQueryUbiquitousDocumentsScope, NSMetadataQueryUbiquitousDataScope, or a folder URL or absolute path."
        }
    }
}
