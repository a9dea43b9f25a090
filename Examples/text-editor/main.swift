// text-editor: a small command-line editor built on `TextDocument`, to show a CloudDocument
// subclass at work. Every command opens the document (a coordinated read), edits it through the
// document (undoable changes), and closes it (which saves the changes durably).
import ExampleDocuments
import Foundation

let status = await TextEditor.run(Array(CommandLine.arguments.dropFirst()))
exit(status)
