// clouddocs-demo: two processes editing one document, live. Run with `swift run clouddocs-demo`.
import Foundation

let arguments = CommandLine.arguments
if arguments.count >= 3, arguments[1] == SecondProcess.flag {
    exit(await SecondProcess.run(arguments: Array(arguments.dropFirst(2))))
}
exit(await Demo.run())
