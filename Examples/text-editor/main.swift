// text-editor: a small command-line editor built on `TextDocument`, to show a CloudDocument
// subclass at work. Most commands open the document (a coordinated read), work through it
// (undoable changes) and close it (which saves any change durably). `append` and `replace`, which
// make one change and exit, instead read, change and write the file inside one coordinated write
// (OneShotTextEdit), so runs of the tool on one file at once never lose each other's changes.
import ExampleDocuments
import Foundation
import Ubiquity

// An evicted document of a sync-agent container downloads when the tool opens it.
FilesOnDemand.enableForSharedAccount()

let status = await TextEditor.run(Array(CommandLine.arguments.dropFirst()))
exit(status)
