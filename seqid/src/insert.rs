//! `insert` and `insert_many`: check the id fields, then either take ids from the
//! counter (counters and block strategies) and write, or run the optimistic loop.

use mongodb::Database;

use crate::bulk::{Outcome, Pending, write_batch};
use crate::counter::{self, CounterSource};
use crate::fields::{ensure_unset, fill, fill_positions, unset};
use crate::{Document, Error, IdValue, InsertOptions, Sequence, Strategy, registry, retry, write};

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
            retry::insert_one(doc, db, &seq, &collection, attempts).await
        }
        _ => {
            let allocator = registry::counter(db, &seq);
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
            retry::insert_many(docs, db, &seq, &collection, attempts).await
        }
        _ => {
            let allocator = registry::counter(db, &seq);
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

pub(crate) async fn sync_counter<T: Document>(db: &Database) -> Result<i64, Error> {
    let seq = T::SEQUENCE;
    match seq.strategy {
        Strategy::Optimistic { .. } => Err(Error::InvalidOption {
            sequence: seq.name.to_owned(),
            option: "strategy",
            value: "optimistic".into(),
            reason: "the optimistic strategy keeps no counter to bring up to date",
        }),
        _ => {
            let allocator = registry::counter(db, &seq);
            counter::sync(db, &seq, &allocator.tally).await
        }
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
