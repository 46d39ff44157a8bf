//! [`InsertFuture`]: what every action of this module becomes when awaited.

use std::future::Future;
use std::pin::Pin;

use tracing::Span;

use crate::base::error::Error;
use crate::base::future::BoxFuture;
use crate::call::context::{Call, Context};
use crate::call::registry::Route;
use crate::call::span::{self, Traced};
use crate::schema::model::Model;
use crate::schema::sequence::Sequence;

/// The future of an [`Insert`](super::Insert), of one document or many (and
/// of the other actions that write: [`FindOrInsert`](super::FindOrInsert),
/// [`NumberDraft`](super::NumberDraft), ...): the call, polled inside its `tracing` span
/// (`seqid.insert`, at debug level), which records what the call did when it ends.
/// Dropping it cancels the insert, as the crate's [notes on
/// cancellation](crate::Document#cancellation) describe. GivenScope only as the actions'
/// `IntoFuture` (`seqid::__private`): a caller awaits the action.
#[doc(hidden)]
#[must_use = "an insert does nothing until it is awaited"]
pub struct InsertFuture<'a, V> {
    // The span lives here, not in the insert's boxed state, whose size every insert pays.
    pub(super) insert: BoxFuture<'a, Traced<Result<V, Error>>>,
    pub(super) span: Span,
}

impl<'a, V: 'a> InsertFuture<'a, V> {
    /// The future of `T`'s call `operation` on `count` documents through `route` with the
    /// options of `call`: `body` run in the call's context, in the call's span.
    pub(super) fn run<T: Model>(
        operation: &'static str,
        count: usize,
        route: Route<'a>,
        call: Call<'a>,
        body: impl for<'c> FnOnce(&'c mut Context<'a>) -> BoxFuture<'c, Result<V, Error>> + Send + 'a,
    ) -> Self {
        let span = span::of(&T::SEQUENCE, T::OTHERS, operation, count);
        let insert = Box::pin(Context::run(&T::SEQUENCE, route, call, body));
        InsertFuture { insert, span }
    }

    /// Records in the span whether the sequence of a call on one document is scoped.
    pub(super) fn scoped(self, seq: &Sequence) -> Self {
        self.span.record("scopes", u32::from(!seq.scope.is_empty()));
        self
    }
}

impl<V> Future for InsertFuture<'_, V> {
    type Output = Result<V, Error>;

    fn poll(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        let this = &mut *self;
        let _entered = this.span.enter();
        let traced = std::task::ready!(this.insert.as_mut().poll(cx));
        std::task::Poll::Ready(traced.record(&this.span))
    }
}

impl<V> std::fmt::Debug for InsertFuture<'_, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InsertFuture")
            .field("span", &self.span)
            .finish_non_exhaustive()
    }
}
