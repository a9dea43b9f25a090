// clouddocsd: the sync agent (issue 18). Work in progress.
import SyncAgent
