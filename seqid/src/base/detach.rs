//! Driver operations that run to their end whatever becomes of their caller.
//!
//! A service drops futures all day: a client hangs up and the framework drops the
//! handler, a `tokio::time::timeout` fires. The driver documents that dropping one of its
//! operations before it completes is not safe: a dropped check-out stays queued in the
//! pool's wait queue, a command dropped on the wire costs its connection, and a storm of
//! them wedges the client for seconds (`tests/it/driver_cancellation.rs`). So every driver
//! operation seqid starts outside the caller's session is [`Finishing`]: it owns what it
//! needs (the document already serialized, a clone of the collection), it is polled where
//! the caller awaits it, and if the caller drops it first, the rest of it runs in a task
//! of its own. Nothing is spawned while callers wait to the end, which is nearly always.
//! An operation in the caller's session cannot leave it: the session is the caller's
//! borrow.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::sync::oneshot;

/// A future that runs to its end even if dropped: dropped before it finished, it is
/// handed to a task of its own on the current runtime (with none, as when the runtime is
/// shutting down, it cannot go on and is dropped).
pub(crate) struct Finishing<F: Future + Send + 'static>
where
    F::Output: Send + 'static,
{
    future: Option<Pin<Box<F>>>,
}

impl<F: Future + Send + 'static> Finishing<F>
where
    F::Output: Send + 'static,
{
    pub(crate) fn new(future: F) -> Self {
        Finishing {
            future: Some(Box::pin(future)),
        }
    }

    /// Hands the rest of the future, if it has not finished, to a task of its own, whose
    /// output comes on the returned receiver.
    pub(crate) fn detach(&mut self) -> Option<oneshot::Receiver<F::Output>> {
        let future = self.future.take()?;
        let runtime = tokio::runtime::Handle::try_current().ok()?;
        let (sender, receiver) = oneshot::channel();
        runtime.spawn(async move {
            // Nobody may be waiting any more: then the output is dropped.
            let _ = sender.send(future.await);
        });
        Some(receiver)
    }
}

impl<F: Future + Send + 'static> Future for Finishing<F>
where
    F::Output: Send + 'static,
{
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let future = self
            .future
            .as_mut()
            .expect("a Finishing future is not polled after it finished");
        let output = std::task::ready!(future.as_mut().poll(cx));
        self.future = None;
        Poll::Ready(output)
    }
}

impl<F: Future + Send + 'static> Drop for Finishing<F>
where
    F::Output: Send + 'static,
{
    fn drop(&mut self) {
        self.detach();
    }
}
