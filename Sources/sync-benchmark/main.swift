// sync-benchmark: work in progress (issue 18 benchmarks).
import SyncAgent
