// sync-demo: two devices syncing one document through a private Apache WebDAV server on
// 127.0.0.1, each device with its own clouddocsd. Needs apache2; run with
// `swift build && swift run sync-demo` (the demo starts the clouddocsd built next to it).
// Exit status: 0 when the demo ran (or was skipped because apache2 is missing), 1 on a failure.
import Foundation

exit(await SyncDemo.run())
