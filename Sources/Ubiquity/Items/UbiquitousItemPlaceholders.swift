import Foundation

extension UbiquityAccount {
    /// Apple's `FileManager.isUbiquitousItem(at:)`: whether the item at `url` is in the cloud —
    /// something is there (not following a final link), or only its placeholder (it was evicted),
    /// and it is inside a ubiquity container. `false` when nothing is there, when it is outside
    /// every container, and when signed out. Any thread.
    public func isUbiquitousItem(at url: URL) -> Bool {
        guard containerOfItem(at: url) != nil else { return false }
        return Self.itemExists(url.standardizedFileURL) || (try? ItemPlaceholder.read(forItemAt: url)) ?? nil != nil
    }

    /// Apple's `FileManager.evictUbiquitousItem(at:)`: drops the local copy of the item at `url`,
    /// keeping it in the cloud — done by the container's provider, and only meaningful for one
    /// with placeholders: the sync agent (`provider = agent`) leaves an ``ItemPlaceholder``;
    /// sync tools keep every file whole, so for them this says so rather than doing nothing. Do
    /// not call it inside a coordinated write of the item: open documents are asked to save and
    /// step aside first. Blocks until the provider answered (the agent: at most two minutes);
    /// any thread, preferably not the main one.
    ///
    /// - Throws: `.notSignedIn` (and the configuration's errors); `.itemNotInContainer` when `url`
    ///   is outside every container; `.itemNotFound` when nothing is there (for providers
    ///   without placeholders); `.providerDoesNotSupportPlaceholders(provider:)` naming the
    ///   provider; `.evictionRefused(path:reason:)` from the agent (not uploaded yet, unsaved
    ///   changes, conflicts, no agent running); or the provider's own errors.
    public func evictUbiquitousItem(at url: URL) throws(UbiquityError) {
        let (container, provider) = try placeholderProvider(forItemAt: url)
        try provider.evictItem(at: url.standardizedFileURL, in: container)
    }

    /// Apple's `FileManager.startDownloadingUbiquitousItem(at:)`: asks the container's provider to
    /// download the item at `url` and returns without waiting (watch the item's status, or a
    /// metadata query, to learn when it is current); an item already here is left alone.
    /// Errors as for ``evictUbiquitousItem(at:)``: sync tools keep every file whole and say so
    /// with `.providerDoesNotSupportPlaceholders(provider:)`. Any thread.
    public func startDownloadingUbiquitousItem(at url: URL) throws(UbiquityError) {
        let (container, provider) = try placeholderProvider(forItemAt: url)
        try provider.startDownloadingItem(at: url.standardizedFileURL, in: container)
    }

    /// The container and provider of the item at `url`, after the checks common to evicting and
    /// downloading.
    private func placeholderProvider(forItemAt url: URL) throws(UbiquityError) -> (UbiquityContainer, any UbiquityProvider) {
        guard try configuration().root != nil else { throw .notSignedIn }
        guard let container = containerOfItem(at: url) else { throw .itemNotInContainer(path: url.standardizedFileURL.path) }
        let provider = provider(for: container)
        if !provider.supportsPlaceholders && !Self.itemExists(url.standardizedFileURL) {
            throw .itemNotFound(path: url.standardizedFileURL.path)
        }
        return (container, provider)
    }
}
