/// coordination-soak: many processes editing the same files for minutes, then a check that
/// nothing was lost, torn or stuck.
///
///     swift run -c release coordination-soak --processes 6 --seconds 60 --folder /tmp/soak
///
/// The program starts N worker processes (itself again, `--worker ROLE …`), split evenly into
/// three kinds, working on a handful of shared files in one run folder:
/// - **document** workers keep a `TextDocument` open on every shared file and loop: append a
///   unique line, save, then a coordinated read (which asks the other processes' documents to
///   save first); a line is confirmed when such a read sees it;
/// - **appender** workers do the README's read-modify-write in one coordinated write; a line is
///   confirmed when the call returns;
/// - **mover** workers move the folder holding half of the shared files back and forth and a file
///   of their own (coordinated moves), and rename and unlink a scratch file without coordination.
///
/// Each worker logs what it confirmed to its own append-only file (`logs/worker-N.log`; its
/// standard error goes to `logs/worker-N.stderr`). After `--seconds` the parent ends their
/// standard input; a worker still running `--grace` seconds later (default 30) is HUNG. For the
/// hung ones, before any is killed, the parent prints which lock files each holds
/// (/proc/<pid>/fdinfo), each thread's kernel wait (/proc/<pid>/task/*/wchan and stack), the
/// kernel's locks on lock files (/proc/locks) and every thread's backtrace from gdb or lldb when
/// one works (in full in `logs/worker-N.backtrace`); then it kills them. The run ends by itself.
///
/// Then the parent checks the final files and their unresolved conflict versions and prints one
/// line per measure — appends confirmed, LOST, TORN, HUNG, timeouts and errors (the first
/// messages), anomalies, descriptors, lock files, unanswered save requests, rates, latency — and
/// `soak: PASS` or `soak: FAIL (reasons)`. Exit status: 0 pass, 1 fail, 2 bad options or a run
/// that could not start. There is no assertion on time other than the hang detection. The run
/// folder is removed after a pass (unless `--keep`) and kept after a failure. `--help` lists every
/// option.
///
/// The workers use a lock directory and a version store private to the run (inside the run
/// folder), so other programs of the user neither disturb nor are disturbed; `--default-lock-dir`
/// uses the library's own lock directory instead.
import Foundation

@main
struct Soak {
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == "--worker" {
            exit(await WorkerMain.run(Array(arguments.dropFirst())))
        }
        do {
            let options = try SoakOptions.parse(arguments)
            exit(Supervisor.run(options))
        } catch {
            if let message = error.message { print("coordination-soak: \(message)") }
            print(SoakOptions.usage)
            exit(error.message == nil ? 0 : 2)
        }
    }
}
