// todo: the book's to-do list on a ManagedDocument, shared by devices through a synced folder
// (Syncthing, the sync agent, any sync tool). See Docs/ManagedDocument.md.
import Foundation

exit(await TodoCommands.run(Array(CommandLine.arguments.dropFirst())))
