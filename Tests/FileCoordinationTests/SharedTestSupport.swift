// The shared test helpers (child processes, raw byte names), visible to every file of this target.
@_exported import TestSupport
