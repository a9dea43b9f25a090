// image-tool: create, inspect, edit, convert and draw images through ImageDocument.
// See ImageTool.usage, or run `image-tool help`.
import Foundation

let status = await ImageTool.run(Array(CommandLine.arguments.dropFirst()))
exit(status)
