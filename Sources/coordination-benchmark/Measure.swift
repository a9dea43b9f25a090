import Foundation

/// Keeps a second thread alive, so uncontended lock costs are measured as a threaded program pays them.
func startIdleThread() {
    Thread { while true { sleep(3600) } }.start()
}

