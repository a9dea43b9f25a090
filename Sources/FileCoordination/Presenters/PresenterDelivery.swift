/// Carries `PresenterRequest`s to presenters and their answers back: the one way a coordinator
/// talks to presenters. `InProcessDelivery` reaches presenter objects of this process; a
/// transport to presenters in other processes is another implementation.
///
/// Contract:
/// - `send` never blocks waiting for the presenter; the message runs on the presenter's own
///   queue (or at once when the caller already runs on that queue).
/// - For a request whose `expectedAnswer` is not `.none`, `answer` is called exactly once, on
///   any thread — also when the presenter is gone (then as the protocol's default method would
///   answer: `.relinquished(reacquirer: nil)` or `.completed(nil)`). A presenter calling its
///   handler twice is answered once.
/// - For a request with a `borrow` token, the presenter's own coordinations made while it
///   answers join the asker's locks (`PresenterBorrowing`), until it answers.
/// - `.reacquire` runs the reacquirer the same delivery handed out, once.
protocol PresenterDelivery: Sendable {
    func send(_ request: PresenterRequest, answer: (@Sendable (PresenterAnswer) -> Void)?)
}
