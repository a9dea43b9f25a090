// image-tool: create, inspect, edit, convert and draw images through ImageDocument.
// See ImageTool.usage, or run `image-tool help`.
import Foundation
import Ubiquity

// An evicted document of a sync-agent container downloads when the tool opens it.
FilesOnDemand.enableForSharedAccount()

let status = await ImageTool.run(Array(CommandLine.arguments.dropFirst()))
exit(status)
