//! The optimistic loop: insert with a candidate id; when another writer took it
//! (duplicate key on `_id`), back off and try a fresh candidate, a bounded number of times.
//! Any other refusal is returned at once.

use std::collections::HashSet;
use std::sync::atomic::Ordering;

use mongodb::bson::Document as BsonDocument;
use mongodb::{Collection, Database};

use crate::bulk::{Outcome, write_batch};
use crate::error::FailedInsert;
use crate::fields::{fill, fill_positions, unset};
use crate::optimistic::backoff;
use crate::write::{self, Refusal};
use crate::{Document, Error, IdValue, Sequence, registry};

pub(crate) async fn insert_one<T: Document>(
    doc: &mut T,
    db: &Database,
    seq: &Sequence,
    collection: &Collection<T>,
    attempts: u32,
) -> Result<IdValue<T>, Error> {
    let state = registry::collection(db, seq);
    let raw = collection.clone_with_type::<BsonDocument>();
    let mut last_id = 0;
    for attempt in 1..=attempts {
        if attempt > 1 {
            backoff(attempt).await;
        }
        let flight = state.candidates(&raw, seq, 1).await?;
        let id = flight.ids[0];
        last_id = id;
        let value = fill(seq, doc, id)?;
        let error = match write::insert_one(collection, doc).await {
            Ok(()) => {
                flight.finish([id]);
                return Ok(value);
            }
            Err(error) => error,
        };
        unset(doc);
        let Some((code, message)) = write::write_error(&error) else {
            return Err(write::failure(seq, id, error));
        };
        match write::classify(&raw, id, code, message).await {
            Ok(Refusal::DuplicateId) => {
                flight.finish([id]);
                state.allocator.tally.retried();
                tracing::debug!(
                    sequence = seq.name,
                    id,
                    attempt,
                    "optimistic: _id taken by another writer; retrying"
                );
            }
            Ok(Refusal::DuplicateOther { index, message }) => {
                return Err(write::duplicate(seq, id, index, &message));
            }
            Ok(Refusal::Other) => return Err(write::failure(seq, id, error)),
            Err(probe) => {
                return Err(Error::driver(
                    seq.name,
                    format!("checking whether _id {id} is taken"),
                    probe,
                ));
            }
        }
    }
    tracing::warn!(
        sequence = seq.name,
        attempts,
        last_id,
        "optimistic: gave up"
    );
    Err(Error::RetriesExhausted {
        sequence: seq.name.to_owned(),
        collection: seq.collection.to_owned(),
        attempts,
        last_id,
    })
}

pub(crate) async fn insert_many<T: Document>(
    docs: &mut [T],
    db: &Database,
    seq: &Sequence,
    collection: &Collection<T>,
    attempts: u32,
) -> Result<Vec<IdValue<T>>, Error> {
    let state = registry::collection(db, seq);
    let raw = collection.clone_with_type::<BsonDocument>();
    let mut outcome = Outcome::default();
    let mut values = vec![None; docs.len()];
    // The last id each document was given, for the report of those never stored.
    let mut tried = vec![0; docs.len()];
    let mut waiting: Vec<usize> = (0..docs.len()).collect();
    let mut attempt = 0;
    while !waiting.is_empty() && attempt < attempts {
        attempt += 1;
        if attempt > 1 {
            backoff(attempt).await;
        }
        let flight = match state.candidates(&raw, seq, waiting.len()).await {
            Ok(flight) => flight,
            Err(error) => return outcome.abandon(seq, &waiting, &tried, error),
        };
        match fill_positions(seq, docs, &waiting, &flight.ids) {
            Ok(filled) => {
                for ((&position, value), &id) in waiting.iter().zip(filled).zip(&flight.ids) {
                    values[position] = Some(value);
                    tried[position] = id;
                }
            }
            Err(error) => return outcome.abandon(seq, &waiting, &tried, error),
        }
        let refused = write_batch(collection, docs, &waiting, &flight.ids, &mut outcome).await;
        let not_stored: HashSet<usize> = refused
            .iter()
            .map(|p| p.position)
            .chain(outcome.unknown.iter().copied())
            .collect();
        let mut used: Vec<i64> = waiting
            .iter()
            .zip(&flight.ids)
            .filter(|(p, _)| !not_stored.contains(p))
            .map(|(_, &id)| id)
            .collect();
        // Retry the documents whose `_id` another writer took; the others have failed.
        waiting.clear();
        for pending in refused {
            match write::classify(&raw, pending.id, pending.code, &pending.message).await {
                Ok(Refusal::DuplicateId) => {
                    used.push(pending.id);
                    waiting.push(pending.position);
                }
                Ok(_) => outcome.failed.push(pending.fail()),
                Err(probe) => outcome.failed.push(FailedInsert {
                    message: probe.to_string(),
                    ..pending.fail()
                }),
            }
        }
        flight.finish(used);
        state
            .allocator
            .tally
            .retries
            .fetch_add(waiting.len() as u64, Ordering::Relaxed);
    }
    outcome
        .failed
        .extend(waiting.iter().map(|&position| FailedInsert {
            index: position,
            id: tried[position],
            code: Some(write::DUPLICATE_KEY),
            message: format!("every id tried in {attempts} attempts was taken by another writer"),
        }));
    outcome.conclude(seq, docs.len(), values.into_iter().flatten().collect())
}
