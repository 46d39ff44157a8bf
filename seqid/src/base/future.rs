//! The boxed futures the actions return when they are awaited.

use std::future::Future;
use std::pin::Pin;

/// A boxed, `Send` future: what an action's `IntoFuture` gives for calls whose state is
/// not worth a type of its own.
pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;
