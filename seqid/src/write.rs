//! The writes to the target collection, and what their failures mean.

use std::collections::HashSet;

use mongodb::Collection;
use mongodb::bson::{Document as BsonDocument, doc};
use mongodb::error::{ErrorKind, WriteFailure};
use mongodb::options::{ReadPreference, SelectionCriteria};
use serde::Serialize;

use crate::error::{Error, duplicate_index};
use crate::{Sequence, numeric};

pub(crate) const DUPLICATE_KEY: i32 = 11000;

/// Reads that decide ids go to the primary, whatever the database's read preference:
/// a secondary may not have the latest writes yet.
pub(crate) const PRIMARY: SelectionCriteria =
    SelectionCriteria::ReadPreference(ReadPreference::Primary);

/// A document the server refused, by its position in the list that was written.
#[derive(Debug)]
pub(crate) struct Refused {
    pub position: usize,
    pub code: i32,
    pub message: String,
}

/// Why a write with a given `_id` was refused.
pub(crate) enum Refusal {
    /// Another document holds the `_id`.
    DuplicateId,
    /// Another unique index: retrying with a new `_id` cannot help.
    DuplicateOther {
        index: Option<String>,
        message: String,
    },
    /// Anything else.
    Other,
}

/// Inserts one document. `Err` is the driver's error, for [`Refusal`] or [`failure`].
pub(crate) async fn insert_one<T: Serialize + Send + Sync>(
    collection: &Collection<T>,
    document: &T,
) -> Result<(), mongodb::error::Error> {
    collection.insert_one(document).await.map(drop)
}

/// The write error of a failed `insert_one`, if the server refused the document itself.
pub(crate) fn write_error(error: &mongodb::error::Error) -> Option<(i32, &str)> {
    match &*error.kind {
        ErrorKind::Write(WriteFailure::WriteError(write)) => Some((write.code, &write.message)),
        _ => None,
    }
}

/// The seqid error for a failed insert of `_id` `id` (no retry).
pub(crate) fn failure(seq: &Sequence, id: i64, error: mongodb::error::Error) -> Error {
    match write_error(&error) {
        Some((DUPLICATE_KEY, message)) => duplicate(
            seq,
            id,
            duplicate_index(message).map(str::to_owned),
            message,
        ),
        _ => Error::driver(
            seq.name,
            format!("inserting _id {id} into `{}`", seq.collection),
            error,
        ),
    }
}

pub(crate) fn duplicate(seq: &Sequence, id: i64, index: Option<String>, message: &str) -> Error {
    Error::DuplicateKey {
        sequence: seq.name.to_owned(),
        collection: seq.collection.to_owned(),
        id,
        index,
        message: message.to_owned(),
    }
}

/// Inserts documents unordered, so one refusal does not hold back the others.
///
/// `Ok` lists the refused documents (empty when all were stored). `Err` means the server's
/// answer did not say which were stored (network failure, write concern error).
pub(crate) async fn insert_many<'a, T: Serialize + Send + Sync + 'a>(
    collection: &Collection<T>,
    documents: impl IntoIterator<Item = &'a T>,
) -> Result<Vec<Refused>, mongodb::error::Error> {
    let error = match collection.insert_many(documents).ordered(false).await {
        Ok(_) => return Ok(Vec::new()),
        Err(error) => error,
    };
    match &*error.kind {
        ErrorKind::InsertMany(bulk) if bulk.write_concern_error.is_none() => Ok(bulk
            .write_errors
            .iter()
            .flatten()
            .map(|e| Refused {
                position: e.index,
                code: e.code,
                message: e.message.clone(),
            })
            .collect()),
        _ => Err(error),
    }
}

/// Which of `ids` are stored in the collection: how seqid learns the truth after an
/// answer that did not tell.
pub(crate) async fn stored_ids(
    collection: &Collection<BsonDocument>,
    ids: &[i64],
) -> Result<HashSet<i64>, mongodb::error::Error> {
    use futures_util::TryStreamExt;

    let found: Vec<BsonDocument> = collection
        .find(doc! { "_id": { "$in": ids } })
        .projection(doc! { "_id": 1 })
        .selection_criteria(PRIMARY)
        .await?
        .try_collect()
        .await?;
    Ok(found
        .iter()
        .filter_map(|d| d.get("_id").and_then(numeric::integral))
        .collect())
}

/// The largest numeric `_id` (floored), or `None` if there is none. `$lte: Infinity` is
/// type-bracketed: it matches numbers only, so MongoDB reads one entry of the `_id` index.
pub(crate) async fn largest_numeric_id(
    collection: &Collection<BsonDocument>,
) -> Result<Option<i64>, mongodb::error::Error> {
    let top = collection
        .find_one(doc! { "_id": { "$lte": f64::INFINITY } })
        .sort(doc! { "_id": -1 })
        .projection(doc! { "_id": 1 })
        .selection_criteria(PRIMARY)
        .await?;
    Ok(top.and_then(|d| d.get("_id").and_then(numeric::floor)))
}

/// Tells a duplicate `_id` from a duplicate on another unique index. MongoDB names the
/// index in its message; a server that does not is asked whether `id` is taken.
pub(crate) async fn classify(
    collection: &Collection<BsonDocument>,
    id: i64,
    code: i32,
    message: &str,
) -> Result<Refusal, mongodb::error::Error> {
    if code != DUPLICATE_KEY {
        return Ok(Refusal::Other);
    }
    let other = |index: Option<&str>| Refusal::DuplicateOther {
        index: index.map(str::to_owned),
        message: message.to_owned(),
    };
    Ok(match duplicate_index(message) {
        Some("_id_") => Refusal::DuplicateId,
        Some(index) => other(Some(index)),
        None if stored_ids(collection, &[id]).await?.contains(&id) => Refusal::DuplicateId,
        None => other(None),
    })
}
