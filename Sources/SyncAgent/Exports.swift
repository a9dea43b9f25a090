// The agent's status types (ContainerSyncStatus, …) live in Ubiquity, whose provider reads them in
// apps' processes; re-exported so every file of this module and its users see them.
@_exported import Ubiquity
