// The shared test helpers (scratch folders, polling, child processes, tmpfs), visible to every
// file of this target.
@_exported import TestSupport
