// clouddocs-demo: two processes editing one document, live. Run with `swift run clouddocs-demo`.
import Foundation

let arguments = CommandLine.arguments
if arguments.count >= 3, arguments[1] == SecondProcess.flag {
    exit(await SecondProcess.run(arguments: Array(arguments.dropFirst(2))))
}
if arguments.count >= 4, arguments[1] == CloudStep.watcherFlag {
    exit(CloudStep.runWatcher(root: URL(fileURLWithPath: arguments[2]), identifier: arguments[3]))
}
exit(await Demo.run())
