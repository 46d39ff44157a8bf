//! The optimistic loop: insert with a candidate id; when another writer took it
//! (duplicate key on `_id`), back off and try a fresh candidate, a bounded number of times.
//! Any other refusal is returned at once.

use std::sync::atomic::Ordering;

use mongodb::Collection;
use mongodb::bson::Document as BsonDocument;

use super::Optimistic;
use crate::backoff::backoff;
use crate::bulk::Batch;
use crate::fields::{fill, unset};
use crate::insert::conclude;
use crate::session::Session;
use crate::write::{self, DUPLICATE_KEY, Fate, Rejection, Sending};
use crate::{Document, Error, IdValue, Sequence};

pub(crate) async fn insert_one<T: Document>(
    doc: &mut T,
    state: &Optimistic,
    seq: &Sequence,
    collection: &Collection<T>,
    attempts: u32,
    session: &mut Session<'_>,
) -> Result<IdValue<T>, Error> {
    let raw = collection.clone_with_type::<BsonDocument>();
    let mut last_id = 0;
    for attempt in 1..=attempts {
        if attempt > 1 {
            backoff(attempt).await;
        }
        let flight = state.candidates(&raw, seq, 1, session).await?;
        let id = flight.ids[0];
        last_id = id;
        let value = fill(seq, doc, id)?;
        match write::insert_one(collection, doc, id, Sending::First, session).await {
            Fate::Taken(_) => {
                unset(doc);
                flight.finish([id]);
                state.allocator.tally.retried();
                tracing::debug!(
                    sequence = seq.name,
                    id,
                    attempt,
                    "optimistic: _id taken by another writer; retrying"
                );
            }
            fate => {
                // A refused id is free again; any other may be stored.
                if !matches!(fate, Fate::Refused(_)) {
                    flight.finish([id]);
                }
                return conclude(seq, doc, id, value, fate);
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

/// Writes the documents waiting in `batch`, retrying those whose `_id` another writer
/// took, up to `attempts` rounds.
pub(crate) async fn insert_many<T: Document>(
    docs: &mut [T],
    state: &Optimistic,
    seq: &Sequence,
    collection: &Collection<T>,
    attempts: u32,
    mut batch: Batch<IdValue<T>>,
    session: &mut Session<'_>,
) -> Result<Vec<IdValue<T>>, Error> {
    let raw = collection.clone_with_type::<BsonDocument>();
    for attempt in 1..=attempts {
        let waiting = batch.waiting();
        if waiting.is_empty() {
            break;
        }
        if attempt > 1 {
            backoff(attempt).await;
        }
        let flight = match state.candidates(&raw, seq, waiting.len(), session).await {
            Ok(flight) => flight,
            Err(error) => return batch.abandon(seq, error),
        };
        let taken = match batch
            .fill_and_write(seq, collection, docs, &waiting, &flight.ids, session)
            .await
        {
            Ok(taken) => taken,
            Err(error) => return batch.abandon(seq, error),
        };
        // Another writer took these ids: the documents wait for new ones.
        for taken in &taken {
            unset(&mut docs[taken.position]);
        }
        // Every candidate not refused is stored, taken or maybe stored: above it next time.
        let used: Vec<i64> = waiting
            .iter()
            .zip(&flight.ids)
            .filter(|(p, _)| !batch.failed(**p))
            .map(|(_, &id)| id)
            .collect();
        flight.finish(used);
        state
            .allocator
            .tally
            .retries
            .fetch_add(taken.len() as u64, Ordering::Relaxed);
    }
    for position in batch.waiting() {
        batch.fail(
            position,
            Rejection {
                code: Some(DUPLICATE_KEY),
                message: format!(
                    "every id tried in {attempts} attempts was taken by another writer"
                ),
                index: Some("_id_".into()),
                ..Rejection::default()
            },
        );
    }
    batch.conclude(seq)
}
