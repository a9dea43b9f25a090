// sync-demo: work in progress (issue 18 demo).
import SyncAgent
