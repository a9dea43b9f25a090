import Foundation
import Ubiquity

let containerWorkerCommands: [String: WorkerCommand] = [:]
