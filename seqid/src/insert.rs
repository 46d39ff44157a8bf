//! `insert`, `insert_many` and their `resume_*` counterparts: check the id fields, then
//! hand the documents to their strategy family ([`counted`] or [`optimistic`]).

use crate::bulk::{Batch, carried};
use crate::fields::{ensure_unset, unset};
use crate::sequences::Route;
use crate::write::{self, Fate};
use crate::{Document, Error, IdField, IdValue, InsertOptions, Sequence, Strategy};
use crate::{counted, optimistic};

pub(crate) async fn one<T: Document>(
    doc: &mut T,
    db: Route<'_>,
    options: InsertOptions,
) -> Result<IdValue<T>, Error> {
    let seq = T::SEQUENCE;
    ensure_unset(&seq, doc)?;
    fresh(doc, db, &seq, &options).await
}

/// Inserts a document whose id field is unset under a new id.
async fn fresh<T: Document>(
    doc: &mut T,
    db: Route<'_>,
    seq: &Sequence,
    options: &InsertOptions,
) -> Result<IdValue<T>, Error> {
    let collection = db.db.collection::<T>(seq.collection);
    match seq.strategy {
        Strategy::Optimistic { max_attempts } => {
            let attempts = attempts(seq, max_attempts, options)?;
            let state = db.collection(seq);
            optimistic::insert::insert_one(doc, &state, seq, &collection, attempts).await
        }
        _ => counted::insert_one(doc, db, seq, &collection).await,
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
    options: InsertOptions,
) -> Result<IdValue<T>, Error> {
    let seq = T::SEQUENCE;
    let (ids, values) = carried(&seq, std::slice::from_ref(doc), &[0])?;
    let (Some(&id), Some(&value)) = (ids.first(), values.first()) else {
        return fresh(doc, db, &seq, &options).await;
    };
    let collection = db.db.collection::<T>(seq.collection);
    match write::insert_one(&collection, doc, id).await {
        Fate::Taken(_) if takes_a_new_id(&seq) => {
            unset(doc);
            fresh(doc, db, &seq, &options).await
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
    options: InsertOptions,
) -> Result<Vec<IdValue<T>>, Error> {
    let seq = T::SEQUENCE;
    for doc in docs.iter() {
        ensure_unset(&seq, doc)?;
    }
    fill_waiting(docs, db, &seq, &options, Batch::new(docs.len())).await
}

pub(crate) async fn resume_many<T: Document>(
    docs: &mut [T],
    db: Route<'_>,
    options: InsertOptions,
) -> Result<Vec<IdValue<T>>, Error> {
    let seq = T::SEQUENCE;
    let carrying: Vec<usize> = (0..docs.len())
        .filter(|&p| !docs[p].sequence_id().is_unset())
        .collect();
    let (ids, values) = carried(&seq, docs, &carrying)?;
    let mut batch = Batch::new(docs.len());
    if !carrying.is_empty() {
        let collection = db.db.collection::<T>(seq.collection);
        let taken = batch
            .write(&collection, docs, &carrying, &ids, &values)
            .await;
        // Replaced below, or of unknown fate with its id kept.
        for taken in taken {
            match takes_a_new_id(&seq) {
                true => unset(&mut docs[taken.position]),
                false => batch.unknown(taken.position),
            }
        }
    }
    fill_waiting(docs, db, &seq, &options, batch).await
}

/// Gives every document still waiting in `batch` an id and writes it.
async fn fill_waiting<T: Document>(
    docs: &mut [T],
    db: Route<'_>,
    seq: &Sequence,
    options: &InsertOptions,
    batch: Batch<IdValue<T>>,
) -> Result<Vec<IdValue<T>>, Error> {
    let waiting = batch.waiting();
    if waiting.is_empty() {
        return batch.conclude(seq);
    }
    let collection = db.db.collection::<T>(seq.collection);
    match seq.strategy {
        Strategy::Optimistic { max_attempts } => {
            let attempts = attempts(seq, max_attempts, options)?;
            let state = db.collection(seq);
            optimistic::insert::insert_many(docs, &state, seq, &collection, attempts, batch).await
        }
        _ => counted::insert_many(docs, db, seq, &collection, batch).await,
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

/// The attempts the optimistic loop may make: the call's option, else the attribute's.
fn attempts(seq: &Sequence, declared: u32, options: &InsertOptions) -> Result<u32, Error> {
    match options.max_attempts.unwrap_or(declared) {
        0 => Err(Error::InvalidOption {
            sequence: seq.name.to_owned(),
            option: "max_attempts",
            value: "0".into(),
            reason: "at least one attempt is needed",
        }),
        n => Ok(n),
    }
}
