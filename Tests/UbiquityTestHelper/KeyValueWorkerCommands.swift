import Foundation
import Ubiquity

let keyValueWorkerCommands: [String: WorkerCommand] = [:]
