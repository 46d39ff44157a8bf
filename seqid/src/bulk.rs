//! The bookkeeping of `insert_many`: which documents were stored, refused, or are of
//! unknown fate, turned into [`Error::Bulk`] when not all were stored.

use std::collections::HashSet;

use mongodb::Collection;
use mongodb::bson::Document as BsonDocument;

use crate::error::{BulkError, FailedInsert};
use crate::fields::unset;
use crate::write::{self, Refused};
use crate::{Document, Error, Sequence};

/// A document the server refused, by its position in the caller's slice.
pub(crate) struct Pending {
    pub position: usize,
    pub id: i64,
    pub code: i32,
    pub message: String,
}

impl Pending {
    pub(crate) fn fail(&self) -> FailedInsert {
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
pub(crate) async fn write_batch<T: Document>(
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
pub(crate) struct Outcome {
    pub failed: Vec<FailedInsert>,
    pub unknown: Vec<usize>,
}

impl Outcome {
    /// `Ok` with every id if all documents are stored, else what happened to each.
    pub(crate) fn conclude<V>(
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
    pub(crate) fn abandon<V>(
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
