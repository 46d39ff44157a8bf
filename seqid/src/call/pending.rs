//! The answer of a write that runs in a task of its own (see [`crate::base::detach`]), and what
//! becomes of it when the caller goes away first.
//!
//! A caller cancelled while its write is on the wire (a client hung up, a timeout fired)
//! leaves the write running to its end, and the document with its id (see
//! [`Document`'s notes](crate::Document#failures-lost-answers-and-cancellation)). Through a
//! [`Sequences`](crate::Sequences) handle, the wait for the write's answer is handed to the
//! handle, by the document's key: [`resume_insert`](crate::Document::resume_insert) then
//! learns what became of the write from the write itself, instead of sending the document
//! again and meeting, maybe, its own copy, which it could not tell from another writer's
//! ([`left_behind`]).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures_util::FutureExt;
use serde::Serialize;

use crate::base::detach::Finishing;
use crate::base::fate::Fate;
use crate::call::registry::Route;
use crate::fields::scope::Key;
use crate::schema::model::Model;
use crate::schema::sequence::Sequence;
use crate::state::orphan::{Orphan, Outcome, fingerprint};

/// What a detached write answers: the fate of its one document, or of each of many.
pub(crate) trait Fates: Send + Sized + 'static {
    fn into_vec(self) -> Vec<Fate>;
}

impl Fates for Fate {
    fn into_vec(self) -> Vec<Fate> {
        vec![self]
    }
}

impl Fates for Vec<Fate> {
    fn into_vec(self) -> Vec<Fate> {
        self
    }
}

/// Runs `write` (outside the caller's session) to its end and answers its fates. If this
/// future is dropped first, the rest of the write runs in a task of its own (see
/// [`crate::base::detach`]) and the wait for its fates goes to the route's handle, by the
/// `keys` and [`fingerprint`]s of the `documents` it writes.
pub(crate) fn answer<'a, F, W, T>(
    write: Finishing<W>,
    route: Route<'a>,
    seq: &'a Sequence,
    keys: &'a [Key],
    documents: &'a [&'a T],
) -> Waiting<'a, W, F, T>
where
    F: Fates,
    W: Future<Output = F> + Send + 'static,
    T: Serialize + Sync,
{
    Waiting {
        write,
        route,
        seq,
        keys,
        documents,
    }
}

/// A write under way; dropped before it ended, it hands the rest of the write to a task of
/// its own and the wait for its fates to the handle. A future of its own, not an `async
/// fn`, so that the insert's state holds it once.
pub(crate) struct Waiting<'a, W, F, T>
where
    W: Future<Output = F> + Send + 'static,
    F: Fates,
    T: Serialize + Sync,
{
    write: Finishing<W>,
    route: Route<'a>,
    seq: &'a Sequence,
    keys: &'a [Key],
    /// The documents as the caller holds them, serialized again only if the caller goes
    /// away (they cannot change while the insert borrows them): every insert would
    /// otherwise pay for a fingerprint that only a cancelled one needs.
    documents: &'a [&'a T],
}

impl<W, F, T> Future for Waiting<'_, W, F, T>
where
    W: Future<Output = F> + Send + 'static,
    F: Fates,
    T: Serialize + Sync,
{
    type Output = F;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F> {
        Pin::new(&mut self.write).poll(cx)
    }
}

impl<W, F, T> Drop for Waiting<'_, W, F, T>
where
    W: Future<Output = F> + Send + 'static,
    F: Fates,
    T: Serialize + Sync,
{
    fn drop(&mut self) {
        // Detached first, whether or not a registry waits for its fates.
        let (Some(receiver), Some(registry)) = (self.write.detach(), self.route.registry) else {
            return;
        };
        let outcome: Outcome = receiver
            .map(|fates| fates.ok().map(|fates| Arc::new(fates.into_vec())))
            .boxed()
            .shared();
        for (index, (key, document)) in self.keys.iter().zip(self.documents).enumerate() {
            // Serialized as it was for the write, so the same bytes.
            let Ok(bytes) = mongodb::bson::to_raw_document_buf(document) else {
                continue;
            };
            let orphan = Orphan {
                outcome: outcome.clone(),
                index,
                fingerprint: fingerprint(&bytes),
            };
            registry.orphaned(self.route.db.name(), self.seq, key, orphan);
        }
    }
}

/// What became of the write of `document` at `key`, sent by an insert through this handle
/// whose caller went away before the answer came (see the module docs): waited for if
/// it is still under way. `None` when there is none, or its outcome is unknown too: then
/// the document is sent again.
pub(crate) async fn left_behind<T: Model>(
    route: Route<'_>,
    key: &Key,
    document: &T,
) -> Option<Fate> {
    let registry = route.registry?;
    let fingerprint = fingerprint(&mongodb::bson::to_raw_document_buf(document).ok()?);
    let orphan = registry.take_orphan(route.db.name(), &T::SEQUENCE, key, fingerprint)?;
    match orphan.fate().await? {
        Fate::Unknown(_) => None,
        fate => Some(fate),
    }
}
