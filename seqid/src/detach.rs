//! Driver operations that run to their end whatever becomes of their caller.
//!
//! A service drops futures all day: a client hangs up and the framework drops the
//! handler, a `tokio::time::timeout` fires. The driver documents that dropping one of its
//! operations before it completes is not safe: the connection it had checked out is
//! closed mid-command, and the pool must make a new one. So seqid runs each driver
//! operation it starts outside the caller's session in a task of its own, which owns what
//! it needs (the document already serialized, a clone of the collection), and the caller
//! only waits for its answer. Dropping the caller's future then drops the wait, never the
//! operation. An operation in the caller's session cannot leave it: the session is the
//! caller's borrow.

use std::future::Future;

/// Runs `operation` in a task of its own and waits for its output: `None` if the task was
/// cancelled before it finished (its runtime is shutting down). A panic in it is resumed
/// here.
pub(crate) async fn detached<F>(operation: F) -> Option<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    match tokio::spawn(operation).await {
        Ok(output) => Some(output),
        Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
        Err(_) => None,
    }
}

/// Runs `operation` in a task of its own, which sends its output on the returned
/// receiver; the caller waits on it ([`crate::pending::answer`]).
pub(crate) fn answering<F>(operation: F) -> tokio::sync::oneshot::Receiver<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let (sender, receiver) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        // The caller may be gone: then the handle, or nobody, waits for it.
        let _ = sender.send(operation.await);
    });
    receiver
}
