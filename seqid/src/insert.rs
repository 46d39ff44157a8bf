//! `insert` and `insert_many` for every strategy: check the id fields, take ids, fill
//! them in, write, and report precisely what happened.

use std::collections::HashSet;
use std::sync::atomic::Ordering;

use mongodb::bson::Document as BsonDocument;
use mongodb::{Collection, Database};

use crate::counter::CounterSource;
use crate::error::{BulkError, Error, FailedInsert};
use crate::optimistic;
use crate::write::{self, Refusal, Refused};
use crate::{Document, IdField, IdValue, InsertOptions, Sequence, Strategy, registry};

pub(crate) async fn one<T: Document>(
    doc: &mut T,
    db: &Database,
    options: InsertOptions,
) -> Result<IdValue<T>, Error> {
    let seq = T::SEQUENCE;
    ensure_unset(&seq, doc)?;
    let collection = db.collection::<T>(seq.collection);
    match seq.strategy {
        Strategy::Optimistic { max_attempts } => {
            let attempts = attempts(&seq, max_attempts, &options)?;
            optimistic_one(doc, db, &seq, &collection, attempts).await
        }
        strategy => {
            let allocator = registry::counter(db, &seq, chunk(strategy));
            let id = allocator
                .allocate(1, &CounterSource { db, sequence: &seq })
                .await?[0];
            let value = fill(&seq, doc, id)?;
            write::insert_one(&collection, doc)
                .await
                .map(|()| value)
                .map_err(|error| {
                    unset(doc);
                    write::failure(&seq, id, error)
                })
        }
    }
}

pub(crate) async fn many<T: Document>(
    docs: &mut [T],
    db: &Database,
    options: InsertOptions,
) -> Result<Vec<IdValue<T>>, Error> {
    let seq = T::SEQUENCE;
    for doc in docs.iter() {
        ensure_unset(&seq, doc)?;
    }
    if docs.is_empty() {
        return Ok(Vec::new());
    }
    let collection = db.collection::<T>(seq.collection);
    match seq.strategy {
        Strategy::Optimistic { max_attempts } => {
            let attempts = attempts(&seq, max_attempts, &options)?;
            optimistic_many(docs, db, &seq, &collection, attempts).await
        }
        strategy => {
            let allocator = registry::counter(db, &seq, chunk(strategy));
            let ids = allocator
                .allocate(docs.len() as u64, &CounterSource { db, sequence: &seq })
                .await?;
            let positions: Vec<usize> = (0..docs.len()).collect();
            let values = fill_positions(&seq, docs, &positions, &ids)?;
            let mut outcome = Outcome::default();
            let refused = write_batch(&collection, docs, &positions, &ids, &mut outcome).await;
            outcome.failed.extend(refused.iter().map(Pending::fail));
            outcome.conclude(&seq, docs.len(), values)
        }
    }
}

fn chunk(strategy: Strategy) -> u64 {
    match strategy {
        Strategy::Block { block_size } => block_size.into(),
        _ => 1,
    }
}

async fn optimistic_one<T: Document>(
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
            optimistic::backoff(attempt).await;
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

async fn optimistic_many<T: Document>(
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
            optimistic::backoff(attempt).await;
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

/// A document the server refused, by its position in the caller's slice.
struct Pending {
    position: usize,
    id: i64,
    code: i32,
    message: String,
}

impl Pending {
    fn fail(&self) -> FailedInsert {
        FailedInsert {
            index: self.position,
            id: self.id,
            code: (self.code != 0).then_some(self.code),
            message: self.message.clone(),
        }
    }
}

/// Writes `docs[positions]` (which carry `ids`) with one `insert_many` and returns the
/// refused documents, their id fields unset again. Documents whose fate cannot be
/// learned go to `outcome.unknown` and keep their ids.
async fn write_batch<T: Document>(
    collection: &Collection<T>,
    docs: &mut [T],
    positions: &[usize],
    ids: &[i64],
    outcome: &mut Outcome,
) -> Vec<Pending> {
    let refused: Vec<Pending> =
        match write::insert_many(collection, positions.iter().map(|&p| &docs[p])).await {
            Ok(refused) => refused
                .into_iter()
                .map(
                    |Refused {
                         position,
                         code,
                         message,
                     }| Pending {
                        position: positions[position],
                        id: ids[position],
                        code,
                        message,
                    },
                )
                .collect(),
            Err(error) => {
                // The answer did not say which were stored: ask the collection.
                match write::stored_ids(&collection.clone_with_type::<BsonDocument>(), ids).await {
                    Ok(stored) => positions
                        .iter()
                        .zip(ids)
                        .filter(|(_, id)| !stored.contains(id))
                        .map(|(&position, &id)| Pending {
                            position,
                            id,
                            code: 0,
                            message: error.to_string(),
                        })
                        .collect(),
                    Err(_) => {
                        outcome.unknown.extend_from_slice(positions);
                        return Vec::new();
                    }
                }
            }
        };
    for pending in &refused {
        unset(&mut docs[pending.position]);
    }
    refused
}

/// The fate of the documents of one `insert_many` that were not stored.
#[derive(Default)]
struct Outcome {
    failed: Vec<FailedInsert>,
    unknown: Vec<usize>,
}

impl Outcome {
    /// `Ok` with every id if all documents are stored, else what happened to each.
    fn conclude<V>(
        mut self,
        seq: &Sequence,
        total: usize,
        values: Vec<V>,
    ) -> Result<Vec<V>, Error> {
        if self.failed.is_empty() && self.unknown.is_empty() {
            return Ok(values);
        }
        self.failed.sort_by_key(|f| f.index);
        self.unknown.sort_unstable();
        let settled: HashSet<usize> = self
            .failed
            .iter()
            .map(|f| f.index)
            .chain(self.unknown.iter().copied())
            .collect();
        Err(Error::Bulk(Box::new(BulkError {
            sequence: seq.name.to_owned(),
            collection: seq.collection.to_owned(),
            inserted: (0..total).filter(|i| !settled.contains(i)).collect(),
            failed: self.failed,
            unknown: self.unknown,
        })))
    }

    /// Stops on `error` with the documents still `waiting` unwritten (their ids unset);
    /// `tried` holds the last id each document was given.
    fn abandon<V>(
        mut self,
        seq: &Sequence,
        waiting: &[usize],
        tried: &[i64],
        error: Error,
    ) -> Result<Vec<V>, Error> {
        let total = tried.len();
        if waiting.len() == total {
            return Err(error);
        }
        self.failed
            .extend(waiting.iter().map(|&index| FailedInsert {
                index,
                id: tried[index],
                code: None,
                message: error.to_string(),
            }));
        self.conclude(seq, total, Vec::new())
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

fn ensure_unset<T: Document>(seq: &Sequence, doc: &T) -> Result<(), Error> {
    match doc.sequence_id().get() {
        None => Ok(()),
        Some(value) => Err(Error::IdAlreadySet {
            sequence: seq.name.to_owned(),
            value: value.into(),
        }),
    }
}

/// The id field holding `id`, and its integer, or an overflow error.
fn field<T: Document>(seq: &Sequence, id: i64) -> Result<(T::Id, IdValue<T>), Error> {
    let field = T::Id::from_seq(id);
    // Zero reads as "unset" in a plain integer field, so it cannot be stored in one.
    match field.as_ref().and_then(IdField::get) {
        Some(value) => Ok((field.expect("checked above"), value)),
        None => Err(Error::Overflow {
            sequence: seq.name.to_owned(),
            value: id.into(),
            target: T::Id::TYPE_NAME,
        }),
    }
}

/// Fills the ids of `docs[positions]`; converts them all first, so an overflow fills none.
fn fill_positions<T: Document>(
    seq: &Sequence,
    docs: &mut [T],
    positions: &[usize],
    ids: &[i64],
) -> Result<Vec<IdValue<T>>, Error> {
    let fields = ids
        .iter()
        .map(|&id| field::<T>(seq, id))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(positions
        .iter()
        .zip(fields)
        .map(|(&position, (field, value))| {
            *docs[position].sequence_id_mut() = field;
            value
        })
        .collect())
}

fn fill<T: Document>(seq: &Sequence, doc: &mut T, id: i64) -> Result<IdValue<T>, Error> {
    let (field, value) = field::<T>(seq, id)?;
    *doc.sequence_id_mut() = field;
    Ok(value)
}

fn unset<T: Document>(doc: &mut T) {
    *doc.sequence_id_mut() = T::Id::unset();
}
