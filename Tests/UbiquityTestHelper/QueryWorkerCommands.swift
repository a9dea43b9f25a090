import Foundation
import Ubiquity

let queryWorkerCommands: [String: WorkerCommand] = [:]
