//! The optimistic loop: insert with a candidate id; when another writer took it
//! (duplicate key on the sequence's unique index), back off and try a fresh candidate, a
//! bounded number of times. Any other refusal is returned at once.

use std::sync::atomic::Ordering;

use mongodb::Collection;
use mongodb::bson::Document as BsonDocument;

use super::state;
use crate::backoff::backoff;
use crate::bulk::Batch;
use crate::fields::{fill, unset};
use crate::insert::conclude;
use crate::scope::{Scope, grouped};
use crate::sequences::Route;
use crate::session::Session;
use crate::write::{self, DUPLICATE_KEY, Fate, Key, Rejection, Sending, identity_index};
use crate::{Document, Error, IdValue, Sequence};

// The call's parts, as the other strategies take them.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn insert_one<T: Document>(
    doc: &mut T,
    scope: Scope,
    route: Route<'_>,
    seq: &Sequence,
    collection: &Collection<T>,
    attempts: u32,
    send: Sending,
    session: &mut Session<'_>,
) -> Result<IdValue<T>, Error> {
    let raw = collection.clone_with_type::<BsonDocument>();
    let state = state(route, seq, &scope, session);
    let mut last_id = 0;
    for attempt in 1..=attempts {
        if attempt > 1 {
            backoff(attempt).await;
        }
        let flight = state.candidates(&raw, seq, &scope, 1, session).await?;
        let id = flight.ids[0];
        last_id = id;
        let value = fill(seq, doc, id)?;
        let key = Key {
            scope: scope.clone(),
            id,
        };
        match write::insert_one(collection, seq, doc, &key, send, session).await {
            Fate::Taken(_) => {
                unset(doc);
                flight.finish([id]);
                state.allocator.tally.retried();
                tracing::debug!(
                    sequence = seq.name,
                    id,
                    attempt,
                    "optimistic: id taken by another writer; retrying"
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
        field: seq.field,
        attempts,
        last_id,
    })
}

/// Writes the documents waiting in `batch`, retrying those whose id another writer took,
/// up to `attempts` rounds. Each round takes the candidates of every scope, then writes
/// the whole round with one `insert_many`.
// The call's parts, as the other strategies take them.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn insert_many<T: Document>(
    docs: &mut [T],
    scopes: &[Scope],
    route: Route<'_>,
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
        let groups = grouped(waiting.iter().map(|&p| (scopes[p].clone(), p)));
        let states: Vec<_> = groups
            .iter()
            .map(|(scope, _)| state(route, seq, scope, session))
            .collect();
        let mut flights = Vec::with_capacity(groups.len());
        for ((scope, positions), state) in groups.iter().zip(&states) {
            match state
                .candidates(&raw, seq, scope, positions.len(), session)
                .await
            {
                Ok(flight) => flights.push(flight),
                Err(error) => return batch.abandon(seq, error),
            }
        }
        let (positions, keys): (Vec<usize>, Vec<Key>) = groups
            .iter()
            .zip(&flights)
            .flat_map(|((scope, positions), flight)| {
                positions.iter().zip(&flight.ids).map(|(&position, &id)| {
                    let key = Key {
                        scope: scope.clone(),
                        id,
                    };
                    (position, key)
                })
            })
            .unzip();
        let taken = match batch
            .fill_and_write(seq, collection, docs, &positions, &keys, session)
            .await
        {
            Ok(taken) => taken,
            Err(error) => return batch.abandon(seq, error),
        };
        // Another writer took these ids: the documents wait for new ones.
        let mut retried = std::collections::HashSet::with_capacity(taken.len());
        for taken in &taken {
            unset(&mut docs[taken.position]);
            retried.insert(taken.position);
        }
        // Every candidate not refused is stored, taken or maybe stored: above it next time.
        for (((_, positions), flight), state) in groups.iter().zip(flights).zip(&states) {
            let used: Vec<i64> = positions
                .iter()
                .zip(&flight.ids)
                .filter(|(p, _)| !batch.failed(**p))
                .map(|(_, &id)| id)
                .collect();
            let retried = positions.iter().filter(|p| retried.contains(*p)).count();
            flight.finish(used);
            state
                .allocator
                .tally
                .retries
                .fetch_add(retried as u64, Ordering::Relaxed);
        }
    }
    for position in batch.waiting() {
        batch.fail(
            position,
            Rejection {
                code: Some(DUPLICATE_KEY),
                message: format!(
                    "every {} tried in {attempts} attempts was taken by another writer",
                    seq.field
                ),
                index: Some(identity_index(seq)),
                ..Rejection::default()
            },
        );
    }
    batch.conclude(seq)
}
