import Foundation
import CloudDocuments
import FileCoordination
import Glibc
import SystemSupport

extension KeyValueStore {
    /// Writes this process's changes to this device's file and reads every device's file, so the
    /// store holds the newest value of every key — Apple's `synchronize()`. Observers are told of
    /// keys that changed other than by this process (on the notification queue).
    ///
    /// Also notices an account change (another root or container configured, signing in or out):
    /// the store then moves to the new container's keys (``KeyValueStoreChange/Reason/accountChange``).
    ///
    /// Blocks while it waits for another process of this device writing the same file, and for
    /// the disk (`fsync`). Any thread.
    ///
    /// - Throws: ``KeyValueStoreError/unavailable(reason:)`` when no container is available (the
    ///   changes stay in memory), ``KeyValueStoreError/storeFileUnusable(path:reason:)`` when this
    ///   device's file cannot be read (it is left as it is), or
    ///   ``KeyValueStoreError/writeFailed(path:underlying:)``; in each case the changes stay pending
    ///   and the next call tries again. Other devices' unusable files are skipped, not thrown.
    public func synchronize() throws(KeyValueStoreError) {
        accountDidChange()
        try refresh(writingPending: true, notify: true)
    }

    /// Checks whether the account now names another container (or none), and if so moves the
    /// store to it: the new container's keys replace the old ones, observers get an
    /// ``KeyValueStoreChange/Reason/accountChange`` change with every key whose value differs,
    /// and changes not yet synchronized are dropped — except when the store had no container
    /// (signed out): those are kept and written to the new one. ``synchronize()`` calls this;
    /// call it from the handler of the identity-did-change notification to react at once.
    public func accountDidChange() {
        guard isAccountBacked else { return }   // a store made with a fixed folder keeps it
        guard case .success(let folder) = resolveFolder() else {
            // Signed out (or the container cannot be made): keep the values, stop writing.
            let wasAvailable = disk.withLock { disk -> Bool in
                guard disk.folder != nil else { return false }
                disk.folder = nil
                disk.snapshots = [:]
                disk.unavailableReason = "the ubiquity container is no longer available"
                return true
            }
            if wasAvailable { stopWatching() }
            return
        }
        // One step under the disk lock (which every refresh holds), so a refresh running at the
        // same time — a `synchronize()`, the folder watcher — sees either the old container or
        // the new one with the account change still to report, never a half-made switch.
        let switched = disk.withLock { disk -> Bool? in
            guard disk.folder != folder else { return nil }
            let wasSignedOut = disk.folder == nil
            disk.folder = folder
            disk.snapshots = [:]
            disk.knownDevices = []
            disk.skippedFiles = [:]
            disk.accountChangeUnreported = true
            if !wasSignedOut { state.withLock { $0.pending = [:] } }
            return wasSignedOut
        }
        guard let wasSignedOut = switched else { return }
        _ = try? refresh(writingPending: wasSignedOut, notify: true)
        restartWatchingIfNeeded()
    }

    /// The work of `synchronize()` and of the folder watcher: fold conflict copies (and, when
    /// `writingPending`, this process's changes) into this device's file, read every device file
    /// that changed since it was last read, merge, and tell observers what changed (when `notify`;
    /// with `reason` for every key when given).
    func refresh(writingPending: Bool, notify: Bool, reason: KeyValueStoreChange.Reason? = nil) throws(KeyValueStoreError) {
        let changes = try disk.withLock { (disk: inout DiskState) throws(KeyValueStoreError) -> [KeyValueStoreChange] in
            guard let folder = disk.folder else {
                if writingPending { throw .unavailable(reason: disk.unavailableReason) }
                return []
            }
            let listing = folder.listing()
            let ownName = KeyValueStoreFolder.fileName(of: folder.device)

            // Conflict copies of device files: their writes go into this device's file, and then
            // they are removed.
            // A copy is read and merged once; it is removed once it is old enough (see
            // `conflictCopyRemovalDelay`), by this refresh or one scheduled for then.
            var copied: [String: KeyValueStoreEntry] = [:]
            var copies: [String] = []
            let removalDelay = conflictCopyRemovalDelay.withLock { $0 }
            var settled: [String] = [], unsettled = false
            disk.mergedCopies = disk.mergedCopies.filter { listing.conflictCopies.contains($0.key) }
            for name in listing.conflictCopies {
                let path = folder.filePath(name)
                let identity = FileIdentity.of(path, followingLinks: false)
                if identity == nil || disk.mergedCopies[name] != identity {
                    guard let snapshot = try? KeyValueStoreFile.read(path) else { continue }
                    KeyValueStoreEntry.merge(snapshot.file.entries, into: &copied)
                    copies.append(name)
                }
                if Self.changeAge(of: path) >= removalDelay { settled.append(name) } else { unsettled = true }
            }
            let pending = writingPending ? state.withLock { $0.pending } : [:]
            var additions = copied
            KeyValueStoreEntry.merge(pending, into: &additions)
            var written: KeyValueStoreFile.Snapshot?
            if !additions.isEmpty {
                written = try writeDeviceFile(folder, adding: additions, lastRead: disk.snapshots[ownName])
                for name in copies { disk.mergedCopies[name] = FileIdentity.of(folder.filePath(name), followingLinks: false) }
                disk.conflictCopiesMerged += copies.count
                state.withLock { state in
                    for (key, entry) in pending where state.pending[key]?.stamp == entry.stamp {
                        state.pending.removeValue(forKey: key)
                    }
                }
            }

            // Every device file that changed since it was last read. A file that is gone keeps
            // its last contents: Syncthing replaces a changed file by deleting it, then renaming
            // the new one into place, and a read in between must not lose its keys (nor report
            // them removed). Keys are removed by tombstones, never by removing a file.
            var snapshots = disk.snapshots
            var deviceFiles = listing.deviceFiles
            if written != nil, !deviceFiles.contains(ownName) { deviceFiles.append(ownName) }
            for name in deviceFiles {
                if name == ownName, let written {
                    snapshots[name] = written
                    continue
                }
                let path = folder.filePath(name)
                if let known = disk.snapshots[name], known.identity == FileIdentity.of(path, followingLinks: true) { continue }
                do throws(KeyValueStoreError) {
                    if let snapshot = try KeyValueStoreFile.read(path) { snapshots[name] = snapshot }
                    disk.skippedFiles.removeValue(forKey: name)
                } catch {
                    // A damaged or newer file: keep what was read of it before, if anything.
                    disk.skippedFiles[name] = error
                }
            }
            disk.snapshots = snapshots
            for name in settled where disk.mergedCopies[name] != nil {
                unlink(folder.filePath(name))
                disk.mergedCopies.removeValue(forKey: name)
            }
            if unsettled, !disk.copyRemovalScheduled {
                disk.copyRemovalScheduled = true
                notificationQueue.asyncAfter(deadline: .now() + Self.seconds(removalDelay) + 0.05) { [weak self] in
                    self?.disk.withLock { $0.copyRemovalScheduled = false }
                    _ = try? self?.refresh(writingPending: false, notify: true)
                }
            }

            var fromFiles: [String: KeyValueStoreEntry] = [:]
            for snapshot in snapshots.values { KeyValueStoreEntry.merge(snapshot.file.entries, into: &fromFiles) }
            let known = disk.knownDevices
            let reason = reason ?? (disk.accountChangeUnreported ? .accountChange : nil)
            disk.accountChangeUnreported = false
            let changes = state.withLock { state in
                Self.replaceMerged(in: &state, with: fromFiles, ownDevice: folder.device, knownDevices: known, reason: reason)
            }
            for entry in fromFiles.values { disk.knownDevices.insert(entry.stamp.device) }
            return changes
        }
        if notify { self.notify(changes) }
    }

    /// Sets `state.merged` to `fromFiles` with this process's pending writes on top, and returns
    /// the keys whose winning write changed, grouped by reason: `reason` when given; otherwise
    /// initial sync for a write of a device not in `knownDevices` (not this one), server change
    /// for the others.
    private static func replaceMerged(in state: inout State, with fromFiles: [String: KeyValueStoreEntry], ownDevice: String,
                                      knownDevices: Set<String>, reason: KeyValueStoreChange.Reason?) -> [KeyValueStoreChange] {
        var merged = fromFiles
        KeyValueStoreEntry.merge(state.pending, into: &merged)
        var changed: [KeyValueStoreChange.Reason: [String]] = [:]
        for key in Set(state.merged.keys).union(merged.keys) {
            let old = state.merged[key], new = merged[key]
            guard old?.stamp != new?.stamp, old?.value != nil || new?.value != nil else { continue }
            let device = (new ?? old)?.stamp.device ?? ownDevice
            let why = reason ?? (device != ownDevice && !knownDevices.contains(device) ? .initialSyncChange : .serverChange)
            changed[why, default: []].append(key)
        }
        state.merged = merged
        state.keyCount = 0
        state.totalSize = 0
        for entry in merged.values {
            state.clock.observe(entry.stamp.time)
            if entry.value != nil {
                state.keyCount += 1
                state.totalSize += entry.size
            }
        }
        return changed.keys.sorted { $0.rawValue < $1.rawValue }.map {
            KeyValueStoreChange(reason: $0, changedKeys: changed[$0, default: []].sorted())
        }
    }

    /// Merges `additions` into this device's file in a coordinated read-modify-write (other
    /// processes of this device write it the same way), saved atomically and durably with
    /// `SafeSave`. Returns what the file holds afterwards. `lastRead` is what this store last
    /// read or wrote of the file: when the file's identity (inode, size, times) is still that one,
    /// its contents are taken from there instead of being read and decoded again.
    private func writeDeviceFile(_ folder: KeyValueStoreFolder, adding additions: [String: KeyValueStoreEntry],
                                 lastRead: KeyValueStoreFile.Snapshot?) throws(KeyValueStoreError) -> KeyValueStoreFile.Snapshot {
        let path = folder.deviceFilePath
        do {
            return try Coordinator().coordinate(writingItemAt: folder.deviceFileURL) { _ in
                let current: KeyValueStoreFile.Snapshot?
                if let lastRead, lastRead.identity == FileIdentity.of(path, followingLinks: true) {
                    current = lastRead
                } else {
                    current = try KeyValueStoreFile.read(path)
                }
                var file = current?.file ?? KeyValueStoreFile(device: folder.device)
                let before = file.entries
                KeyValueStoreEntry.merge(additions, into: &file.entries)
                if let current, file.entries == before { return current }
                file.format = KeyValueStoreFile.currentFormat
                file.device = folder.device
                let data = file.encoded()
                do throws(DocumentError) { try SafeSave.write(data, to: folder.deviceFileURL, creating: false) } catch {
                    throw KeyValueStoreError.writeFailed(path: path, underlying: error)
                }
                return KeyValueStoreFile.Snapshot(file: file, identity: FileIdentity.of(path, followingLinks: true) ?? .missing)
            }
        } catch let error as KeyValueStoreError {
            throw error
        } catch {
            throw .writeFailed(path: path, underlying: error)
        }
    }

    /// How long ago the item at `path` was last renamed or changed on this machine (its change
    /// time); zero when it cannot be read.
    static func changeAge(of path: String) -> Duration {
        var info = stat()
        guard lstat(path, &info) == 0 else { return .zero }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let seconds = now.tv_sec - info.st_ctim.tv_sec
        let nanoseconds = now.tv_nsec - info.st_ctim.tv_nsec
        return .seconds(seconds) + .nanoseconds(nanoseconds)
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
