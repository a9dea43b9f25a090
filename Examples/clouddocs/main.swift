// clouddocs: the iCloud recipes of Apple's document guides, from the command line — containers,
// live metadata queries, moving documents to and from the cloud, and the key-value store.
import Foundation

let status = await CloudDocs.run(Array(CommandLine.arguments.dropFirst()))
exit(status)
