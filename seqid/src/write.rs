//! The writes to the target collection, and what became of each document written.
//!
//! A document is only ever written with the id it was given, so the unique index on the
//! sequence's field (`_id`'s own, or the one [`create_indexes`](crate::Document::create_indexes)
//! makes on a field and its scope) makes a repeated write of it harmless: the second copy
//! is refused, never stored. That is what lets seqid settle an error whose outcome the
//! driver could not learn: it asks the collection whether the id holds this very document.

use std::collections::HashMap;

use mongodb::Collection;
use mongodb::bson::{Bson, Document as BsonDocument, doc};
use mongodb::error::{ErrorKind, WriteFailure};
use mongodb::options::{Acknowledgment, ReadConcern, ReadPreference, SelectionCriteria};
use serde::Serialize;

use crate::error::{Error, duplicate_index, server_code};
use crate::scope::{Scope, grouped};
use crate::session::Session;
use crate::{Sequence, numeric};

/// Where a document's id is: its scope and its number, unique in the collection (the
/// number alone for an unscoped sequence).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Key {
    pub scope: Scope,
    pub id: i64,
}

pub(crate) const DUPLICATE_KEY: i32 = 11000;

/// Reads that decide ids go to the primary, whatever the database's read preference:
/// a secondary may not have the latest writes yet.
pub(crate) const PRIMARY: SelectionCriteria =
    SelectionCriteria::ReadPreference(ReadPreference::Primary);

/// What became of one document sent to the server with a given id.
#[derive(Debug, Clone)]
pub(crate) enum Fate {
    /// Stored under its id: acknowledged, or found stored, identical, after an error.
    Stored,
    /// Another document holds its `_id`: it is not stored, and never will be under it.
    Taken(Rejection),
    /// The server refused it, or it was never sent; it is not stored.
    Refused(Rejection),
    /// Not known: the request may have been applied, or may still be.
    Unknown(mongodb::error::Error),
}

/// The server's (or the driver's) reason for not storing a document.
#[derive(Debug, Clone, Default)]
pub(crate) struct Rejection {
    /// The server's error code; `None` when the request was never sent.
    pub code: Option<i32>,
    pub message: String,
    /// For a duplicate key, the unique index the server named.
    pub index: Option<String>,
    /// The driver's error, when the driver failed before sending.
    pub source: Option<mongodb::error::Error>,
}

impl Rejection {
    fn write(code: i32, message: &str) -> Self {
        Rejection {
            code: Some(code),
            message: message.to_owned(),
            index: (code == DUPLICATE_KEY)
                .then(|| duplicate_index(message).map(str::to_owned))
                .flatten(),
            source: None,
        }
    }

    fn not_sent(error: &mongodb::error::Error) -> Self {
        Rejection {
            message: error.to_string(),
            source: Some(error.clone()),
            ..Rejection::default()
        }
    }

    pub(crate) fn is_duplicate_key(&self) -> bool {
        self.code == Some(DUPLICATE_KEY)
    }

    /// The error for a single document sent with `id`.
    pub(crate) fn into_error(self, seq: &Sequence, id: i64) -> Error {
        match self.source {
            _ if self.is_duplicate_key() => Error::DuplicateKey {
                sequence: seq.name.to_owned(),
                collection: seq.collection.to_owned(),
                field: seq.field,
                id,
                index: self.index,
                message: self.message,
            },
            Some(source) => Error::driver(
                seq.name,
                format!("inserting {} {id} into `{}`", seq.field, seq.collection),
                source,
            ),
            None => Error::Refused {
                sequence: seq.name.to_owned(),
                collection: seq.collection.to_owned(),
                field: seq.field,
                id,
                code: self.code,
                message: self.message,
            },
        }
    }
}

/// Whether the documents were sent before under their ids (a resume). A refusal of this
/// copy then says nothing of the earlier one, which may still be on its way: the outcome
/// is unknown, not refused, and the id stays.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sending {
    First,
    Again,
}

/// Inserts one document that carries the id of `key`, and says what became of it.
pub(crate) async fn insert_one<T: Serialize + Send + Sync>(
    collection: &Collection<T>,
    seq: &Sequence,
    document: &T,
    key: &Key,
    send: Sending,
    session: &mut Session<'_>,
) -> Fate {
    let mut insert = collection.insert_one(document);
    if let Some(session) = session.join() {
        insert = insert.session(session);
    }
    let error = match insert.await {
        Ok(_) => return Fate::Stored,
        Err(error) => error,
    };
    if session.in_transaction() {
        let fate = match &*error.kind {
            ErrorKind::Write(WriteFailure::WriteError(write)) => {
                Fate::Refused(Rejection::write(write.code, &write.message))
            }
            _ => in_transaction(&error),
        };
        return fate;
    }
    let fate = match &*error.kind {
        ErrorKind::Write(WriteFailure::WriteError(write)) => {
            Some(Rejection::write(write.code, &write.message))
        }
        _ if never_sent(&error) => Some(Rejection::not_sent(&error)),
        _ => None,
    };
    // The lookups are boxed: inline, their state would make every insert's larger (see
    // `crate::insert`), and they follow an error.
    let fates = match fate {
        Some(rejection) => {
            Box::pin(classify(
                collection,
                seq,
                &[(document, key, rejection)],
                &error,
            ))
            .await
        }
        None => {
            Box::pin(settle(
                collection,
                seq,
                &[document],
                std::slice::from_ref(key),
                error.clone(),
            ))
            .await
        }
    };
    match fates.into_iter().next() {
        Some(Fate::Refused(_)) if send == Sending::Again => Fate::Unknown(error),
        Some(fate) => fate,
        None => Fate::Unknown(error),
    }
}

/// Inserts documents (each carrying the id of its key in `keys`) unordered, so that one
/// refusal does not hold back the others, and says what became of each.
pub(crate) async fn insert_many<T: Serialize + Send + Sync>(
    collection: &Collection<T>,
    seq: &Sequence,
    documents: &[&T],
    keys: &[Key],
    send: Sending,
    session: &mut Session<'_>,
) -> Vec<Fate> {
    let mut insert = collection
        .insert_many(documents.iter().copied())
        .ordered(false);
    if let Some(session) = session.join() {
        insert = insert.session(session);
    }
    let error = match insert.await {
        Ok(_) => return vec![Fate::Stored; documents.len()],
        Err(error) => error,
    };
    if session.in_transaction() {
        // A failed write aborts the transaction: no document of it is stored, those the
        // server took included. The ones it refused say why.
        let mut fates = vec![in_transaction(&error); documents.len()];
        if let ErrorKind::InsertMany(bulk) = &*error.kind {
            for refused in bulk.write_errors.iter().flatten() {
                if let Some(fate) = fates.get_mut(refused.index) {
                    *fate = Fate::Refused(Rejection::write(refused.code, &refused.message));
                }
            }
        }
        return fates;
    }
    let bulk = match &*error.kind {
        ErrorKind::InsertMany(bulk) => bulk,
        _ if never_sent(&error) => {
            let fates = not_sent(collection, seq, documents, keys, error.clone()).await;
            return again(fates, send, &error);
        }
        _ => return settle(collection, seq, documents, keys, error).await,
    };
    let refusals: Vec<(usize, Rejection)> = bulk
        .write_errors
        .iter()
        .flatten()
        .filter(|e| e.index < documents.len())
        .map(|e| (e.index, Rejection::write(e.code, &e.message)))
        .collect();
    let rejected: Vec<_> = refusals
        .iter()
        .map(|(i, rejection)| (documents[*i], &keys[*i], rejection.clone()))
        .collect();
    // Without a write concern error, every document not refused was stored; with one,
    // they were written but may yet be rolled back.
    let others = match bulk.write_concern_error {
        None => Fate::Stored,
        Some(_) => Fate::Unknown(error.clone()),
    };
    let mut fates = vec![others; documents.len()];
    let classified = classify(collection, seq, &rejected, &error).await;
    for ((index, _), fate) in refusals.iter().zip(classified) {
        fates[*index] = fate;
    }
    again(fates, send, &error)
}

/// For documents sent again, a refusal of this copy is an unknown outcome (see [`Sending`]).
fn again(fates: Vec<Fate>, send: Sending, error: &mongodb::error::Error) -> Vec<Fate> {
    match send {
        Sending::First => fates,
        Sending::Again => fates
            .into_iter()
            .map(|fate| match fate {
                Fate::Refused(_) => Fate::Unknown(error.clone()),
                fate => fate,
            })
            .collect(),
    }
}

/// The driver failed before sending a batch. The driver splits a large `insert_many`
/// into several commands and reports only the failure, so earlier batches may be stored:
/// those found stored, identical, are; the others were never sent. If the collection
/// cannot be asked, nothing is known.
async fn not_sent<T: Serialize + Send + Sync>(
    collection: &Collection<T>,
    seq: &Sequence,
    documents: &[&T],
    keys: &[Key],
    error: mongodb::error::Error,
) -> Vec<Fate> {
    let Ok(stored) = stored_documents(collection, seq, keys).await else {
        return vec![Fate::Unknown(error); documents.len()];
    };
    let refusals = match &*error.kind {
        ErrorKind::InvalidArgument { .. } => too_large(documents, &error),
        _ => vec![Fate::Refused(Rejection::not_sent(&error)); documents.len()],
    };
    found_or(&stored, documents, keys, refusals)
}

/// `otherwise`, but `Stored` for each document found in `stored` under its key, identical.
fn found_or<T: Serialize>(
    stored: &HashMap<Key, BsonDocument>,
    documents: &[&T],
    keys: &[Key],
    otherwise: Vec<Fate>,
) -> Vec<Fate> {
    otherwise
        .into_iter()
        .zip(documents.iter().zip(keys))
        .map(|(fate, (document, key))| match stored.get(key) {
            Some(found) if same_document(*document, found) => Fate::Stored,
            _ => fate,
        })
        .collect()
}

/// The largest document MongoDB stores (`maxBsonObjectSize`).
const MAX_DOCUMENT_BYTES: usize = 16 * 1024 * 1024;

/// The driver refused a whole batch before sending it, typically because one document is
/// larger than a BSON document may be: each document is told apart, so that the message
/// of the others says they were only held back.
fn too_large<T: Serialize>(documents: &[&T], error: &mongodb::error::Error) -> Vec<Fate> {
    let sizes: Vec<Option<usize>> = documents
        .iter()
        .map(|d| mongodb::bson::to_vec(d).ok().map(|bytes| bytes.len()))
        .collect();
    let oversized: Vec<usize> = (0..sizes.len())
        .filter(|&i| sizes[i].is_some_and(|n| n > MAX_DOCUMENT_BYTES))
        .collect();
    let refused = |message: String| {
        Fate::Refused(Rejection {
            message,
            source: Some(error.clone()),
            ..Rejection::default()
        })
    };
    (0..documents.len())
        .map(|i| match (sizes[i], oversized.first()) {
            (_, None) => refused(format!("not sent: the driver refused the batch: {error}")),
            (Some(n), _) if n > MAX_DOCUMENT_BYTES => refused(format!(
                "not sent: the document is {n} bytes, above the {MAX_DOCUMENT_BYTES}-byte limit \
                 of a BSON document"
            )),
            (_, Some(_)) => refused(
                "not sent: held back with a document of the same batch that is too large; \
                 insert it again"
                    .into(),
            ),
        })
        .collect()
}

/// What became of a write inside the caller's transaction that failed with `error`.
/// Nothing is looked up: a read cannot tell what the transaction will do. An error the
/// server answered with (a write conflict, say) aborted the transaction, so the write will
/// never be stored; the driver's error is kept whole, with its labels
/// (`TransientTransactionError`), so that the caller's retry of the transaction sees
/// them. Without an answer, the transaction's fate, and the write's, is unknown.
fn in_transaction(error: &mongodb::error::Error) -> Fate {
    let answered = matches!(
        &*error.kind,
        ErrorKind::Command(_) | ErrorKind::Write(_) | ErrorKind::InsertMany(_)
    );
    if answered || never_sent(error) {
        Fate::Refused(Rejection {
            code: server_code(error),
            message: error.to_string(),
            index: None,
            source: Some(error.clone()),
        })
    } else {
        Fate::Unknown(error.clone())
    }
}

/// Whether the driver failed before the request could reach the server (a retry that
/// fails so reports the first attempt's error instead).
fn never_sent(error: &mongodb::error::Error) -> bool {
    matches!(
        &*error.kind,
        ErrorKind::InvalidArgument { .. }
            | ErrorKind::BsonSerialization(_)
            | ErrorKind::ServerSelection { .. }
            | ErrorKind::Authentication { .. }
            | ErrorKind::DnsResolve { .. }
            | ErrorKind::ConnectionPoolCleared { .. }
            | ErrorKind::SessionsNotSupported
            | ErrorKind::InvalidTlsConfig { .. }
            | ErrorKind::IncompatibleServer { .. }
            | ErrorKind::Shutdown
    )
}

/// After an error that does not say whether the documents were stored: those found
/// stored, identical, are; the rest are unknown (a request may still be on its way, so
/// absence proves nothing). A write concern error is not settled by looking: the write is
/// there, but not as durable as asked, and may yet be rolled back.
async fn settle<T: Serialize + Send + Sync>(
    collection: &Collection<T>,
    seq: &Sequence,
    documents: &[&T],
    keys: &[Key],
    error: mongodb::error::Error,
) -> Vec<Fate> {
    let stored = match &*error.kind {
        ErrorKind::Write(WriteFailure::WriteConcernError(_)) => HashMap::new(),
        _ => stored_documents(collection, seq, keys)
            .await
            .unwrap_or_default(),
    };
    found_or(
        &stored,
        documents,
        keys,
        vec![Fate::Unknown(error); documents.len()],
    )
}

/// Turns refusals into fates. A duplicate key may be this very document, stored by an
/// earlier attempt whose answer was lost (a driver's retry after a restart that lost the
/// server's record of the first attempt): the id is looked up, and a document identical
/// to ours there means it is stored. Another document there means the id is taken.
///
/// No document there, though the server named the `_id` index, is not proof that the id
/// is free: an earlier attempt of this very insert (the driver's retry, a request the
/// network delivered late) may be what the server met, and may not be readable yet (or
/// may have been removed since). That outcome is unknown, with `error`, the server's
/// answer, as its cause; taking a new id instead could store the document twice.
async fn classify<T: Serialize + Send + Sync>(
    collection: &Collection<T>,
    seq: &Sequence,
    rejected: &[(&T, &Key, Rejection)],
    error: &mongodb::error::Error,
) -> Vec<Fate> {
    let duplicates: Vec<Key> = rejected
        .iter()
        .filter(|(_, _, r)| r.is_duplicate_key())
        .map(|(_, key, _)| (*key).clone())
        .collect();
    let stored = match duplicates.is_empty() {
        true => Ok(HashMap::new()),
        false => stored_documents(collection, seq, &duplicates).await,
    };
    let identity = identity_index(seq);
    rejected
        .iter()
        .map(|(document, key, rejection)| {
            let rejection = rejection.clone();
            if !rejection.is_duplicate_key() {
                return Fate::Refused(rejection);
            }
            let stored = match &stored {
                Ok(stored) => stored,
                Err(error) => return Fate::Unknown(error.clone()),
            };
            match stored.get(*key) {
                Some(found) if same_document(*document, found) => Fate::Stored,
                Some(_) => Fate::Taken(rejection),
                // A duplicate on another unique index (MongoDB names it; a server that
                // does not is answered by the lookup).
                None if rejection.index.as_deref() == Some(identity.as_str()) => {
                    tracing::debug!(
                        id = key.id,
                        index = identity,
                        "duplicate id, but no document holds it when looked up: unknown"
                    );
                    Fate::Unknown(error.clone())
                }
                None => Fate::Refused(rejection),
            }
        })
        .collect()
}

/// The name of the unique index that holds a sequence's ids: `_id`'s own, or the one
/// [`create_indexes`](crate::Document::create_indexes) makes on the scope fields and the
/// field, named as MongoDB names an index by default (`project_1_number_1`).
pub(crate) fn identity_index(seq: &Sequence) -> String {
    if seq.field == "_id" {
        return "_id_".into();
    }
    seq.scope
        .iter()
        .chain([&seq.field])
        .map(|field| format!("{field}_1"))
        .collect::<Vec<_>>()
        .join("_")
}

/// The filter for the documents at `keys`: by scope, the ids in it.
fn at_keys(seq: &Sequence, keys: &[Key]) -> BsonDocument {
    let mut filters: Vec<BsonDocument> = grouped(keys.iter().map(|k| (k.scope.clone(), k.id)))
        .into_iter()
        .map(|(scope, ids)| {
            let mut filter = scope.filter();
            filter.insert(seq.field, doc! { "$in": ids });
            filter
        })
        .collect();
    match filters.len() {
        1 => filters.remove(0),
        _ => doc! { "$or": filters },
    }
}

/// The documents stored at `keys`, by key, read from the primary. When the collection
/// writes with `w: "majority"`, only what a majority holds counts as stored (read concern
/// `majority`): a write seen on the primary alone may yet be rolled back.
async fn stored_documents<T: Send + Sync>(
    collection: &Collection<T>,
    seq: &Sequence,
    keys: &[Key],
) -> Result<HashMap<Key, BsonDocument>, mongodb::error::Error> {
    use futures_util::TryStreamExt;

    let majority = collection
        .write_concern()
        .is_some_and(|concern| concern.w == Some(Acknowledgment::Majority));
    let raw = collection.clone_with_type::<BsonDocument>();
    let mut find = raw.find(at_keys(seq, keys)).selection_criteria(PRIMARY);
    if majority {
        find = find.read_concern(ReadConcern::majority());
    }
    let found: Vec<BsonDocument> = find.await?.try_collect().await?;
    Ok(found
        .into_iter()
        .filter_map(|d| {
            let id = d.get(seq.field).and_then(numeric::integral)?;
            let scope = Scope::of_stored(seq, &d)?;
            Some((Key { scope, id }, d))
        })
        .collect())
}

/// Whether `stored` is `ours` as the server keeps it: the same fields with the same
/// values, numbers compared by value (servers may widen or narrow integer types). A
/// document written without `_id` gets one from the driver, which `ours` does not know.
fn same_document<T: Serialize>(ours: &T, stored: &BsonDocument) -> bool {
    let Ok(ours) = mongodb::bson::to_document(ours) else {
        return false;
    };
    if ours.contains_key("_id") {
        return same_fields(&ours, stored);
    }
    let mut stored = stored.clone();
    stored.remove("_id");
    same_fields(&ours, &stored)
}

fn same_fields(a: &BsonDocument, b: &BsonDocument) -> bool {
    a.len() == b.len()
        && a.iter()
            .all(|(key, value)| b.get(key).is_some_and(|other| same_value(value, other)))
}

fn same_value(a: &Bson, b: &Bson) -> bool {
    match (a, b) {
        (Bson::Document(a), Bson::Document(b)) => same_fields(a, b),
        (Bson::Array(a), Bson::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same_value(a, b))
        }
        _ => match (number(a), number(b)) {
            (Some(a), Some(b)) => a == b,
            _ => a == b,
        },
    }
}

/// Int32, Int64 and Double as one comparable value (`i128` keeps Int64 exact).
fn number(value: &Bson) -> Option<Number> {
    match value {
        Bson::Int32(v) => Some(Number::Int((*v).into())),
        Bson::Int64(v) => Some(Number::Int((*v).into())),
        Bson::Double(v) if v.fract() == 0.0 && v.abs() < 1e38 => Some(Number::Int(*v as i128)),
        Bson::Double(v) => Some(Number::Float(*v)),
        _ => None,
    }
}

#[derive(PartialEq)]
enum Number {
    Int(i128),
    Float(f64),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_compare_by_value_across_integer_types() {
        let ours = doc! { "_id": 7_i64, "n": 3_i64, "tags": ["a", 1_i64], "sub": { "x": 2.0 } };
        let narrowed =
            doc! { "sub": { "x": 2_i32 }, "_id": 7_i32, "n": 3_i32, "tags": ["a", 1_i32] };
        assert!(same_fields(&ours, &narrowed));
        let other = doc! { "_id": 7_i64, "n": 4_i64, "tags": ["a", 1_i64], "sub": { "x": 2.0 } };
        assert!(!same_fields(&ours, &other));
        let extra =
            doc! { "_id": 7_i64, "n": 3_i64, "tags": ["a", 1_i64], "sub": { "x": 2.0 }, "y": 1 };
        assert!(!same_fields(&ours, &extra));
        assert!(!same_value(&Bson::Double(2.5), &Bson::Int32(2)));
        assert!(!same_value(&Bson::String("1".into()), &Bson::Int32(1)));
    }
}
