//! `insert`, `insert_many` and their `resume_*` counterparts: make the call's
//! [`Context`], check the id fields and read the scopes, then hand the documents to their
//! strategy family ([`counted`] or [`optimistic`]).
//!
//! **The size of an insert's state.** An `insert` is one boxed future, whose size is that
//! of the largest state any of its paths can reach: every `async fn` awaited inline adds
//! its own, and every value held across an await. A block insert's common path (an id
//! from the live block, one `insert`) would otherwise carry the states of the optimistic
//! loop, of a reservation and of the lookups after an error, over 13 KB, allocated and
//! copied on every call: about 1,000 of the 5,200 instructions seqid added to the
//! driver's own insert (callgrind). So the paths that are rare, or that already cost a
//! round trip, are boxed where they start: the optimistic branch here, a reservation in
//! the allocator, the gapless reservation, a write in the caller's session and what
//! follows a write's error in [`write`], and `resume`; the call's parts travel as one
//! [`Context`] borrowed by each step, and a [`Fate`]'s reasons are boxed. The state is
//! now 408 bytes; `tests/state.rs` holds every strategy to that, and BENCHMARKS.md (*The
//! client's own cost*) prints it.

use crate::action::{BoxFuture, Call};
use crate::bulk::{Batch, Outgoing, carried};
use crate::context::Context;
use crate::fields::{ensure_unset, unset};
use crate::scope::Scope;
use crate::sequences::Route;
use crate::span::{self, Traced};
use crate::write::{self, Fate, Key};
use crate::{Document, Error, IdField, IdValue, Sequence, Strategy};
use crate::{counted, optimistic};
use crate::{indexes, pending};

pub(crate) async fn one<T: Document>(
    doc: &mut T,
    route: Route<'_>,
    call: Call<'_>,
) -> Traced<Result<IdValue<T>, Error>> {
    // A reference to the constant, not a copy of it in the insert's state.
    let seq: &'static Sequence = &T::SEQUENCE;
    let mut cx = match Context::of(seq, route, call).await {
        Ok(cx) => cx,
        Err(error) => return Traced::from(Err(error)),
    };
    // Not held across the await below: the error it may hold is larger than the rest.
    let scope = match ensure_unset(seq, doc).and_then(|()| Scope::of(seq, doc)) {
        Ok(scope) => scope,
        Err(error) => return cx.finish(Err(error)),
    };
    let result = fresh(doc, scope, &mut cx).await;
    cx.finish(result)
}

/// Inserts a document whose id field is unset under a new id (a first send).
async fn fresh<T: Document>(
    doc: &mut T,
    scope: Scope,
    cx: &mut Context<'_>,
) -> Result<IdValue<T>, Error> {
    match cx.seq.strategy {
        // Boxed: the optimistic loop's state would otherwise make every counted insert's
        // as large as its own.
        Strategy::Optimistic { .. } => optimistic_one(doc, scope, cx).await,
        _ => counted::insert_one(doc, scope, cx).await,
    }
}

/// The optimistic branch of [`fresh`], boxed apart (a box made inside `fresh` still
/// leaves room for the unboxed state in `fresh`'s own).
fn optimistic_one<'a, T: Document>(
    doc: &'a mut T,
    scope: Scope,
    cx: &'a mut Context<'_>,
) -> BoxFuture<'a, Result<IdValue<T>, Error>> {
    Box::pin(async move {
        indexes::require(cx.route, cx.seq, indexes::OPTIMISTIC).await?;
        optimistic::insert::insert_one(doc, scope, cx).await
    })
}

/// The answer for a single document written with `id`: a refused document gets its id
/// field unset; one of unknown fate keeps it.
pub(crate) fn conclude<T: Document>(
    seq: &Sequence,
    doc: &mut T,
    id: i64,
    value: IdValue<T>,
    fate: Fate,
) -> Result<IdValue<T>, Error> {
    match fate {
        Fate::Stored => Ok(value),
        Fate::Unknown(unknown) => Err(Error::OutcomeUnknown {
            sequence: seq.name.to_owned(),
            collection: seq.collection.to_owned(),
            field: seq.field,
            id,
            reason: unknown.why,
            source: Box::new(unknown.error),
        }),
        Fate::Taken(rejection) | Fate::Refused(rejection) => {
            unset(doc);
            Err(rejection.into_error(seq, id))
        }
    }
}

pub(crate) async fn resume<T: Document>(
    doc: &mut T,
    route: Route<'_>,
    call: Call<'_>,
) -> Traced<Result<IdValue<T>, Error>> {
    let seq: &'static Sequence = &T::SEQUENCE;
    let mut cx = match Context::of(seq, route, call).await {
        Ok(cx) => cx,
        Err(error) => return Traced::from(Err(error)),
    };
    let result = resume_one(doc, &mut cx).await;
    cx.finish(result)
}

/// [`resume`], in its context.
async fn resume_one<T: Document>(doc: &mut T, cx: &mut Context<'_>) -> Result<IdValue<T>, Error> {
    let (seq, route) = (cx.seq, cx.route);
    let (keys, values) = carried(seq, std::slice::from_ref(doc), &[0])?;
    let (Some(key), Some(&value)) = (keys.into_iter().next(), values.first()) else {
        let scope = Scope::of(seq, doc)?;
        return fresh(doc, scope, cx).await;
    };
    indexes::require(route, seq, indexes::RESUME).await?;
    // The write of a cancelled insert through this handle says itself what became of it.
    if let Some(fate) = left_behind(route, seq, &key, doc).await {
        return match fate {
            // Another writer's document held the id: as the insert itself would have.
            Fate::Taken(_) if takes_a_new_id(seq) => {
                unset(doc);
                fresh(doc, key.scope, cx).await
            }
            fate => conclude(seq, doc, key.id, value, fate),
        };
    }
    let again = cx.again();
    match write::insert_one(doc, &key, again, (), cx).await {
        // Only where the caller asserted that equal content is its own: a different
        // document holds the id (see `write::classify`).
        Fate::Taken(_) if takes_a_new_id(seq) => {
            unset(doc);
            fresh(doc, key.scope, cx).await
        }
        // The id stays, so that this document is not stored a second time by mistake.
        Fate::Taken(rejection) => Err(rejection.into_error(seq, key.id)),
        fate => conclude(seq, doc, key.id, value, fate),
    }
}

/// What became of the write of `document` at `key`, sent by an insert through this handle
/// whose caller went away before the answer came (see [`crate::pending`]): waited for if
/// it is still under way. `None` when there is none, or its outcome is unknown too: then
/// the document is sent again.
async fn left_behind<T: Document>(
    route: Route<'_>,
    seq: &Sequence,
    key: &Key,
    document: &T,
) -> Option<Fate> {
    let sequences = route.sequences?;
    let fingerprint = pending::fingerprint(&mongodb::bson::to_raw_document_buf(document).ok()?);
    let orphan = sequences.take_orphan(route.db.name(), seq, key, fingerprint)?;
    match orphan.fate().await? {
        Fate::Unknown(_) => None,
        fate => Some(fate),
    }
}

/// Whether a resumed document whose id a different document holds gets a new id. With
/// the optimistic strategy, another writer took the id after this insert was lost. A
/// counter's id is handed out once, so the document there is this one, changed since it
/// landed, or one written by other means: its fate stays unknown.
fn takes_a_new_id(seq: &Sequence) -> bool {
    matches!(seq.strategy, Strategy::Optimistic { .. })
}

pub(crate) async fn many<T: Document>(
    docs: &mut [T],
    route: Route<'_>,
    call: Call<'_>,
) -> Traced<Result<Vec<IdValue<T>>, Error>> {
    let seq: &'static Sequence = &T::SEQUENCE;
    let mut cx = match Context::of(seq, route, call).await {
        Ok(cx) => cx,
        Err(error) => return Traced::from(Err(error)),
    };
    let result = many_fresh(docs, &mut cx).await;
    cx.finish(result)
}

/// [`many`], in its context.
async fn many_fresh<T: Document>(
    docs: &mut [T],
    cx: &mut Context<'_>,
) -> Result<Vec<IdValue<T>>, Error> {
    for doc in docs.iter() {
        ensure_unset(cx.seq, doc)?;
    }
    let scopes = scopes(docs, cx)?;
    let batch = Batch::new(docs.len());
    fill_waiting(docs, &scopes, batch, cx).await
}

/// The scope of every document, read before anything is reserved or written.
fn scopes<T: Document>(docs: &[T], cx: &Context<'_>) -> Result<Vec<Scope>, Error> {
    let scopes = docs
        .iter()
        .map(|doc| Scope::of(cx.seq, doc))
        .collect::<Result<Vec<_>, _>>()?;
    span::scopes(cx.seq, &scopes);
    Ok(scopes)
}

pub(crate) async fn resume_many<T: Document>(
    docs: &mut [T],
    route: Route<'_>,
    call: Call<'_>,
) -> Traced<Result<Vec<IdValue<T>>, Error>> {
    let seq: &'static Sequence = &T::SEQUENCE;
    let mut cx = match Context::of(seq, route, call).await {
        Ok(cx) => cx,
        Err(error) => return Traced::from(Err(error)),
    };
    let result = many_again(docs, &mut cx).await;
    cx.finish(result)
}

/// [`resume_many`], in its context.
async fn many_again<T: Document>(
    docs: &mut [T],
    cx: &mut Context<'_>,
) -> Result<Vec<IdValue<T>>, Error> {
    let (seq, route) = (cx.seq, cx.route);
    let scopes = scopes(docs, cx)?;
    let carrying: Vec<usize> = (0..docs.len())
        .filter(|&p| !docs[p].sequence_id().is_unset())
        .collect();
    let (keys, values) = carried(seq, docs, &carrying)?;
    let mut batch = Batch::new(docs.len());
    if !carrying.is_empty() {
        indexes::require(route, seq, indexes::RESUME).await?;
        // The writes of a cancelled insert through this handle say themselves what became
        // of them; the other documents are sent again.
        let mut again = Outgoing::default();
        for ((&position, key), &value) in carrying.iter().zip(&keys).zip(&values) {
            batch.sent(position, key.id);
            match left_behind(route, seq, key, &docs[position]).await {
                Some(Fate::Stored) => batch.stored(position, value),
                // Another writer's document held the id: a new one, as the insert itself
                // would have done.
                Some(Fate::Taken(_)) if takes_a_new_id(seq) => unset(&mut docs[position]),
                Some(Fate::Taken(rejection) | Fate::Refused(rejection)) => {
                    unset(&mut docs[position]);
                    batch.fail(position, *rejection);
                }
                Some(Fate::Unknown(_)) | None => again.push(position, key.clone(), value),
            }
        }
        let send = cx.again();
        let taken = batch.write(docs, &again, send, (), cx).await;
        // Replaced below, or of unknown fate with its id kept.
        for taken in taken {
            match takes_a_new_id(seq) {
                true => unset(&mut docs[taken.position]),
                false => batch.unknown(taken.position),
            }
        }
    }
    fill_waiting(docs, &scopes, batch, cx).await
}

/// Gives every document still waiting in `batch` an id and writes it.
async fn fill_waiting<T: Document>(
    docs: &mut [T],
    scopes: &[Scope],
    batch: Batch<IdValue<T>>,
    cx: &mut Context<'_>,
) -> Result<Vec<IdValue<T>>, Error> {
    if batch.waiting().is_empty() {
        return batch.conclude(cx.seq);
    }
    match cx.seq.strategy {
        Strategy::Optimistic { .. } => {
            if let Err(error) = indexes::require(cx.route, cx.seq, indexes::OPTIMISTIC).await {
                return batch.abandon(cx.seq, error);
            }
            optimistic::insert::insert_many(docs, scopes, batch, cx).await
        }
        _ => counted::insert_many(docs, scopes, batch, cx).await,
    }
}
