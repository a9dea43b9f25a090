import Foundation
import Synchronization

/// Tells the person waiting what image-tool is doing, on standard error, when the work is long.
///
/// Large images take a while (tens of seconds in a debug build, `swift run` without `-c release`),
/// and a silent terminal looks hung. Each command names its steps (``step(_:)``); nothing is
/// printed while the whole command is quick, so scripts and pipes see only the result:
///
/// - on a terminal, once the command has run for ``terminalDelay``, one status line is shown and
///   rewritten in place (step and elapsed seconds) and erased at the end;
/// - otherwise (a pipe, a file, a log), once it has run for ``plainDelay``, each step is printed
///   as one line when it starts, and a last line says how long it all took.
///
/// `IMAGE_TOOL_PROGRESS_DELAY_MS` overrides both delays (0 shows every step; used by the tests).
/// Standard output is never touched. Safe from any thread: the state is behind a `Mutex`, and a
/// timer on a global queue refreshes the display while a long step runs.
final class ProgressReporter: Sendable {
    /// Before a terminal shows anything.
    static let terminalDelay = Duration.milliseconds(500)
    /// Before a pipe or file gets any line.
    static let plainDelay = Duration.seconds(2)

    private struct State {
        var step = ""
        var shownStep = false  // the current step has been printed (plain mode)
        var shownAnything = false
        var finished = false
        var hintGiven = false
    }

    private let start = ContinuousClock.now
    private let delay: Duration
    private let isTerminal: Bool
    private let state = Mutex(State())
    /// Refreshes the display while a step runs; cancelled by ``finish()`` (or when the reporter goes).
    private let timer = Mutex<(any DispatchSourceTimer)?>(nil)

    /// Starts timing. `isTerminal` and `delay` default to standard error's kind and the
    /// environment (see the type's description).
    init(isTerminal: Bool = isatty(STDERR_FILENO) != 0, delay: Duration? = nil) {
        self.isTerminal = isTerminal
        if let delay {
            self.delay = delay
        } else if let text = ProcessInfo.processInfo.environment["IMAGE_TOOL_PROGRESS_DELAY_MS"],
                  let milliseconds = Int(text), milliseconds >= 0 {
            self.delay = .milliseconds(milliseconds)
        } else {
            self.delay = isTerminal ? Self.terminalDelay : Self.plainDelay
        }
        timer.withLock { $0 = Self.startTimer { [weak self] in self?.refresh() } }
    }

    /// A running timer calling `handler` every 250 ms on a global queue.
    private static func startTimer(_ handler: @escaping @Sendable () -> Void) -> any DispatchSourceTimer {
        let source = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
        source.schedule(deadline: .now() + .milliseconds(250), repeating: .milliseconds(250))
        source.setEventHandler(handler: handler)
        source.resume()
        return source
    }

    deinit { timer.withLock { $0?.cancel() } }

    /// Starts a step, described in a few words ("decoding photo.png (12.3 MB)").
    func step(_ description: String) {
        state.withLock { state in
            guard !state.finished else { return }
            state.step = description
            state.shownStep = false
            display(&state)
        }
    }

    /// Ends the report: erases the terminal line, or says how long it took when lines were
    /// printed. Later calls to ``step(_:)`` print nothing.
    func finish() {
        timer.withLock { timer in
            timer?.cancel()
            timer = nil
        }
        state.withLock { state in
            guard !state.finished else { return }
            state.finished = true
            guard state.shownAnything else { return }
            if isTerminal {
                write("\r\u{1B}[K")
            } else {
                write("image-tool: done in \(Self.seconds(ContinuousClock.now - start))\n")
            }
        }
    }

    private func refresh() {
        state.withLock { state in
            guard !state.finished else { return }
            display(&state)
        }
    }

    /// Prints the current step if the command has run long enough. Called with the lock held.
    private func display(_ state: inout State) {
        let elapsed = ContinuousClock.now - start
        guard elapsed >= delay, !state.step.isEmpty else { return }
        if isTerminal {
            write("\r\u{1B}[Kimage-tool: \(state.step)… \(Self.seconds(elapsed))")
            state.shownAnything = true
        } else if !state.shownStep {
            write("image-tool: \(state.step)…\n")
            state.shownStep = true
            state.shownAnything = true
        }
        #if DEBUG
        if !state.hintGiven, elapsed >= .seconds(5) {
            state.hintGiven = true
            let hint = "image-tool: this is a debug build; for large images build it with `swift run -c release image-tool …` (several times faster)\n"
            write(isTerminal ? "\r\u{1B}[K" + hint : hint)
        }
        #endif
    }

    private func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }

    private static func seconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        return String(format: "%.1f s", Double(seconds) + Double(attoseconds) / 1e18)
    }
}
