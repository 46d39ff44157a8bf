//! `insert`, `insert_many` and their `resume_*` counterparts: check the id fields and
//! read the scopes, then hand the documents to their strategy family ([`counted`] or
//! [`optimistic`]).
//!
//! **The size of an insert's state.** An `insert` is one boxed future, whose size is that
//! of the largest state any of its paths can reach: every `async fn` awaited inline adds
//! its own. A block insert's common path (an id from the live block, one `insert`) would
//! otherwise carry the states of the optimistic loop, of a reservation and of the lookups
//! after an error, over 13 KB, allocated and copied on every call: about 1,000 of the
//! 5,200 instructions seqid added to the driver's own insert (callgrind). So the paths
//! that are rare, or that already cost a round trip, are boxed where they start: the
//! optimistic branch here, a reservation in the allocator, the gapless reservation, the
//! lookups after an error in [`write`], and `resume`. The state is now 776 bytes, below
//! the allocator's per-thread cache limit; `tests/state.rs` holds every strategy to that,
//! and BENCHMARKS.md (*The client's own cost*) prints it.

use crate::action::{BoxFuture, Call};
use crate::bulk::{Batch, carried};
use crate::fields::{ensure_unset, unset};
use crate::indexes;
use crate::scope::Scope;
use crate::sequences::Route;
use crate::session::Session;
use crate::write::{self, Fate, Sending};
use crate::{Document, Error, IdField, IdValue, Sequence, Strategy};
use crate::{counted, optimistic};

pub(crate) async fn one<T: Document>(
    doc: &mut T,
    db: Route<'_>,
    call: Call<'_>,
) -> Result<IdValue<T>, Error> {
    // A reference to the constant, not a copy of it in the insert's state.
    let seq: &'static Sequence = &T::SEQUENCE;
    ensure_unset(seq, doc)?;
    let attempts = attempts(seq, call.max_attempts)?;
    let scope = Scope::of(seq, doc)?;
    let send = Sending::first(call.content_is_unique);
    let mut session = Session::of(call.session).await;
    fresh(doc, scope, db, seq, attempts, send, &mut session).await
}

/// Inserts a document whose id field is unset under a new id (a first send).
async fn fresh<T: Document>(
    doc: &mut T,
    scope: Scope,
    db: Route<'_>,
    seq: &Sequence,
    attempts: u32,
    send: Sending,
    session: &mut Session<'_>,
) -> Result<IdValue<T>, Error> {
    match seq.strategy {
        // Boxed: the optimistic loop's state would otherwise make every counted insert's
        // as large as its own.
        Strategy::Optimistic { .. } => {
            optimistic_one(doc, scope, db, seq, attempts, send, session).await
        }
        _ => {
            let collection = db.db.collection::<T>(seq.collection);
            counted::insert_one(doc, scope, db, seq, &collection, send, session).await
        }
    }
}

/// The optimistic branch of [`fresh`], boxed apart (a box made inside `fresh` still
/// leaves room for the unboxed state in `fresh`'s own).
fn optimistic_one<'a, T: Document>(
    doc: &'a mut T,
    scope: Scope,
    db: Route<'a>,
    seq: &'a Sequence,
    attempts: u32,
    send: Sending,
    session: &'a mut Session<'_>,
) -> BoxFuture<'a, Result<IdValue<T>, Error>> {
    Box::pin(async move {
        indexes::require(db, seq, indexes::OPTIMISTIC).await?;
        let collection = db.db.collection::<T>(seq.collection);
        optimistic::insert::insert_one(doc, scope, db, seq, &collection, attempts, send, session)
            .await
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
    db: Route<'_>,
    call: Call<'_>,
) -> Result<IdValue<T>, Error> {
    let seq = T::SEQUENCE;
    let attempts = attempts(&seq, call.max_attempts)?;
    let first = Sending::first(call.content_is_unique);
    let mut session = Session::of(call.session).await;
    let (keys, values) = carried(&seq, std::slice::from_ref(doc), &[0])?;
    let (Some(key), Some(&value)) = (keys.into_iter().next(), values.first()) else {
        let scope = Scope::of(&seq, doc)?;
        return fresh(doc, scope, db, &seq, attempts, first, &mut session).await;
    };
    indexes::require(db, &seq, indexes::RESUME).await?;
    let collection = db.db.collection::<T>(seq.collection);
    let again = Sending::again(call.content_is_unique);
    match write::insert_one(&collection, &seq, doc, &key, again, &mut session).await {
        // Only where the caller asserted that equal content is its own: a different
        // document holds the id (see `write::classify`).
        Fate::Taken(_) if takes_a_new_id(&seq) => {
            unset(doc);
            fresh(doc, key.scope, db, &seq, attempts, first, &mut session).await
        }
        // The id stays, so that this document is not stored a second time by mistake.
        Fate::Taken(rejection) => Err(rejection.into_error(&seq, key.id)),
        fate => conclude(&seq, doc, key.id, value, fate),
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
    db: Route<'_>,
    call: Call<'_>,
) -> Result<Vec<IdValue<T>>, Error> {
    let seq = T::SEQUENCE;
    for doc in docs.iter() {
        ensure_unset(&seq, doc)?;
    }
    let attempts = attempts(&seq, call.max_attempts)?;
    let scopes = scopes(&seq, docs)?;
    let mut session = Session::of(call.session).await;
    let batch = Batch::new(docs.len(), Sending::first(call.content_is_unique));
    fill_waiting(docs, &scopes, db, &seq, attempts, batch, &mut session).await
}

/// The scope of every document, read before anything is reserved or written.
fn scopes<T: Document>(seq: &Sequence, docs: &[T]) -> Result<Vec<Scope>, Error> {
    docs.iter().map(|doc| Scope::of(seq, doc)).collect()
}

pub(crate) async fn resume_many<T: Document>(
    docs: &mut [T],
    db: Route<'_>,
    call: Call<'_>,
) -> Result<Vec<IdValue<T>>, Error> {
    let seq = T::SEQUENCE;
    let attempts = attempts(&seq, call.max_attempts)?;
    let scopes = scopes(&seq, docs)?;
    let mut session = Session::of(call.session).await;
    let carrying: Vec<usize> = (0..docs.len())
        .filter(|&p| !docs[p].sequence_id().is_unset())
        .collect();
    let (keys, values) = carried(&seq, docs, &carrying)?;
    let mut batch = Batch::new(docs.len(), Sending::first(call.content_is_unique));
    if !carrying.is_empty() {
        indexes::require(db, &seq, indexes::RESUME).await?;
        let collection = db.db.collection::<T>(seq.collection);
        let taken = batch
            .write(
                &collection,
                &seq,
                docs,
                &carrying,
                &keys,
                &values,
                Sending::again(call.content_is_unique),
                &mut session,
            )
            .await;
        // Replaced below, or of unknown fate with its id kept.
        for taken in taken {
            match takes_a_new_id(&seq) {
                true => unset(&mut docs[taken.position]),
                false => batch.unknown(taken.position),
            }
        }
    }
    fill_waiting(docs, &scopes, db, &seq, attempts, batch, &mut session).await
}

/// Gives every document still waiting in `batch` an id and writes it.
async fn fill_waiting<T: Document>(
    docs: &mut [T],
    scopes: &[Scope],
    db: Route<'_>,
    seq: &Sequence,
    attempts: u32,
    batch: Batch<IdValue<T>>,
    session: &mut Session<'_>,
) -> Result<Vec<IdValue<T>>, Error> {
    let waiting = batch.waiting();
    if waiting.is_empty() {
        return batch.conclude(seq);
    }
    let collection = db.db.collection::<T>(seq.collection);
    match seq.strategy {
        Strategy::Optimistic { .. } => {
            if let Err(error) = indexes::require(db, seq, indexes::OPTIMISTIC).await {
                return batch.abandon(seq, error);
            }
            optimistic::insert::insert_many(
                docs,
                scopes,
                db,
                seq,
                &collection,
                attempts,
                batch,
                session,
            )
            .await
        }
        _ => counted::insert_many(docs, scopes, db, seq, &collection, batch, session).await,
    }
}

/// The attempts the optimistic loop may make: the call's, else the attribute's (other
/// strategies make one).
fn attempts(seq: &Sequence, call: Option<u32>) -> Result<u32, Error> {
    let declared = match seq.strategy {
        Strategy::Optimistic { max_attempts } => max_attempts,
        _ => 1,
    };
    match call.unwrap_or(declared) {
        0 => Err(Error::InvalidOption {
            sequence: seq.name.to_owned(),
            option: "max_attempts",
            value: "0".into(),
            reason: "at least one attempt is needed",
        }),
        n => Ok(n),
    }
}
