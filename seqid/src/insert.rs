//! `insert`, `insert_many` and their `resume_*` counterparts: check the id fields, then
//! hand the documents to their strategy family ([`counted`] or [`optimistic`]).

use crate::action::Call;
use crate::bulk::{Batch, carried};
use crate::fields::{ensure_unset, unset};
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
    let seq = T::SEQUENCE;
    ensure_unset(&seq, doc)?;
    let attempts = attempts(&seq, call.max_attempts)?;
    let mut session = Session::of(call.session).await;
    fresh(doc, db, &seq, attempts, &mut session).await
}

/// Inserts a document whose id field is unset under a new id.
async fn fresh<T: Document>(
    doc: &mut T,
    db: Route<'_>,
    seq: &Sequence,
    attempts: u32,
    session: &mut Session<'_>,
) -> Result<IdValue<T>, Error> {
    let collection = db.db.collection::<T>(seq.collection);
    match seq.strategy {
        Strategy::Optimistic { .. } => {
            let state = optimistic::state(db, seq, session);
            optimistic::insert::insert_one(doc, &state, seq, &collection, attempts, session).await
        }
        _ => counted::insert_one(doc, db, seq, &collection, session).await,
    }
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
        Fate::Unknown(source) => Err(Error::OutcomeUnknown {
            sequence: seq.name.to_owned(),
            collection: seq.collection.to_owned(),
            id,
            source: Box::new(source),
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
    let mut session = Session::of(call.session).await;
    let (ids, values) = carried(&seq, std::slice::from_ref(doc), &[0])?;
    let (Some(&id), Some(&value)) = (ids.first(), values.first()) else {
        return fresh(doc, db, &seq, attempts, &mut session).await;
    };
    let collection = db.db.collection::<T>(seq.collection);
    match write::insert_one(&collection, doc, id, Sending::Again, &mut session).await {
        Fate::Taken(_) if takes_a_new_id(&seq) => {
            unset(doc);
            fresh(doc, db, &seq, attempts, &mut session).await
        }
        // The id stays, so that this document is not stored a second time by mistake.
        Fate::Taken(rejection) => Err(rejection.into_error(&seq, id)),
        fate => conclude(&seq, doc, id, value, fate),
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
    let mut session = Session::of(call.session).await;
    let batch = Batch::new(docs.len());
    fill_waiting(docs, db, &seq, attempts, batch, &mut session).await
}

pub(crate) async fn resume_many<T: Document>(
    docs: &mut [T],
    db: Route<'_>,
    call: Call<'_>,
) -> Result<Vec<IdValue<T>>, Error> {
    let seq = T::SEQUENCE;
    let attempts = attempts(&seq, call.max_attempts)?;
    let mut session = Session::of(call.session).await;
    let carrying: Vec<usize> = (0..docs.len())
        .filter(|&p| !docs[p].sequence_id().is_unset())
        .collect();
    let (ids, values) = carried(&seq, docs, &carrying)?;
    let mut batch = Batch::new(docs.len());
    if !carrying.is_empty() {
        let collection = db.db.collection::<T>(seq.collection);
        let taken = batch
            .write(
                &collection,
                docs,
                &carrying,
                &ids,
                &values,
                Sending::Again,
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
    fill_waiting(docs, db, &seq, attempts, batch, &mut session).await
}

/// Gives every document still waiting in `batch` an id and writes it.
async fn fill_waiting<T: Document>(
    docs: &mut [T],
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
            let state = optimistic::state(db, seq, session);
            optimistic::insert::insert_many(
                docs,
                &state,
                seq,
                &collection,
                attempts,
                batch,
                session,
            )
            .await
        }
        _ => counted::insert_many(docs, db, seq, &collection, batch, session).await,
    }
}

pub(crate) async fn sync_counter<T: Document>(db: Route<'_>) -> Result<i64, Error> {
    let seq = T::SEQUENCE;
    match seq.strategy {
        // `CounterBacked` is derived for counter strategies only; a hand-written impl for
        // an optimistic type still gets a typed error.
        Strategy::Optimistic { .. } => Err(Error::InvalidOption {
            sequence: seq.name.to_owned(),
            option: "strategy",
            value: "optimistic".into(),
            reason: "the optimistic strategy keeps no counter to bring up to date",
        }),
        _ => counted::sync(db, &seq).await,
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
