//! The writes to the target collection, and what became of each document written; and
//! the conditional update that numbers a stored draft ([`number_draft`]).
//!
//! A document is only ever written with the id it was given, so the unique index on the
//! sequence's field (`_id`'s own, or the one [`create_indexes`](crate::Document::create_indexes)
//! makes on a field and its scope) makes a repeated write of it harmless: the second copy
//! is refused, never stored.
//!
//! A document is reported stored only when the server acknowledged this call's own write
//! of it. Equal content proves nothing: two callers inserting equal documents (a like, a
//! page view, a form sent twice) are ordinary, so a stored document equal to ours at our
//! id may well be another caller's. What the server answered is what counts:
//!
//! - **A duplicate key answering a first send** is another writer's document. The only
//!   earlier attempt a first send has is the driver's own retry, which a replica set
//!   answers from its record of the first attempt (retryable writes: same session, same
//!   transaction number), never with a duplicate key; a standalone server gets no retry.
//!   The id is looked up all the same: when no document holds it, the server may have
//!   met a copy of this very insert still being applied, so the outcome is unknown.
//! - **No answer** (the connection or the server went away after the request was sent):
//!   unknown; [`resume_insert`](crate::Document::resume_insert) sends the document again.
//! - **A duplicate key answering a copy sent again** (a resume): the document there is
//!   this call's earlier copy, or another writer's, and the two cannot be told apart.
//!   Unknown, unless the caller asserted that no other writer stores a document equal to
//!   this one ([`content_is_unique`](crate::action::Insert::content_is_unique)): then, and only
//!   then, a document equal to it is its own.

use std::collections::HashMap;

use mongodb::action::Action;
use mongodb::bson::{Bson, Document as BsonDocument, RawDocumentBuf, doc};
use mongodb::error::{ErrorKind, WriteFailure};
use mongodb::options::{Acknowledgment, ReadConcern};
use mongodb::{ClientSession, Collection};
use serde::Serialize;

use crate::base::detach::Finishing;
use crate::base::error::{Doing, Error};
use crate::base::fate::{Fate, Rejection, Sending, why};
use crate::base::numeric;
use crate::base::server::{PRIMARY, identity_index, server_code};
use crate::base::session::Session;
use crate::call::context::Context;
use crate::call::pending;
use crate::fields::scope::{Key, Scope, grouped};
use crate::schema::sequence::Sequence;

/// Inserts one document that carries the id of `key`, and says what became of it.
///
/// Outside the caller's session the insert, and the lookups that may follow it, run in a
/// task of their own on the document serialized here (see [`crate::base::detach`]): dropping
/// this future never drops them half-way. `guard` is dropped when the write ends.
pub(crate) async fn insert_one<T: Serialize + Send + Sync>(
    document: &T,
    key: &Key,
    send: Sending,
    guard: impl Send + 'static,
    cx: &mut Context<'_>,
) -> Fate {
    let seq = cx.seq;
    if cx.session.join().is_some() {
        // Boxed: inline, the write's state would make every insert's larger (see
        // `crate::insert`), and a write in the caller's session is not the common case.
        let collection = cx.collection::<T>();
        let to = To::new(&collection, seq, send);
        return Box::pin(write_one(&to, document, key, &mut cx.session)).await;
    }
    let bytes = match mongodb::bson::to_raw_document_buf(document) {
        Ok(bytes) => bytes,
        Err(error) => return Fate::refused(Rejection::not_sent(&error.into())),
    };
    let collection = cx.raw_collection();
    let key_owned = key.clone();
    // Boxed here, so that the insert's state holds a pointer to the write, not the write.
    let write = Finishing::new(async move {
        let mut none = Session::none();
        let to = To::new(&collection, seq, send);
        let fate = write_one(&to, &bytes, &key_owned, &mut none).await;
        drop(guard);
        fate
    });
    let keys = std::slice::from_ref(key);
    pending::answer(write, cx.route, seq, keys, &[document]).await
}

/// Where and how documents are written: the collection, the sequence whose ids they carry,
/// and how they are sent.
struct To<'a, D: Send + Sync> {
    collection: &'a Collection<D>,
    seq: &'static Sequence,
    send: Sending,
}

impl<'a, D: Send + Sync> To<'a, D> {
    fn new(collection: &'a Collection<D>, seq: &'static Sequence, send: Sending) -> Self {
        To {
            collection,
            seq,
            send,
        }
    }
}

/// [`insert_one`], where it runs.
async fn write_one<D: Serialize + Send + Sync>(
    to: &To<'_, D>,
    document: &D,
    key: &Key,
    session: &mut Session<'_>,
) -> Fate {
    let insert = to.collection.insert_one(document);
    let error = match insert.optional(session.join(), |a, s| a.session(s)).await {
        Ok(_) => return Fate::Stored,
        Err(error) => error,
    };
    if session.in_transaction() {
        return match &*error.kind {
            ErrorKind::Write(WriteFailure::WriteError(write)) => {
                Fate::refused(Rejection::write(write.code, &write.message))
            }
            _ => in_transaction(&error),
        };
    }
    // Boxed: inline, what follows an error (the lookups, the error itself) would make
    // every write's state larger (see `crate::insert`).
    Box::pin(after_error(to, document, key, error)).await
}

/// The fate of a document [`write_one`] sent outside a transaction, which the server did
/// not store: `error` says why, or that the answer was lost.
async fn after_error<D: Serialize + Send + Sync>(
    to: &To<'_, D>,
    document: &D,
    key: &Key,
    error: mongodb::error::Error,
) -> Fate {
    let fates = match &*error.kind {
        ErrorKind::Write(WriteFailure::WriteError(write)) => {
            let rejection = Rejection::write(write.code, &write.message);
            classify(to, &[(document, key, rejection)], &error).await
        }
        _ if never_sent(&error) => vec![Fate::refused(Rejection::not_sent(&error))],
        _ => settle(to, &[document], std::slice::from_ref(key), &error).await,
    };
    again(fates, to.send, &error)
        .pop()
        .unwrap_or_else(|| Fate::unknown(why::NO_ANSWER, &error))
}

/// The largest document MongoDB stores (`maxBsonObjectSize`).
const MAX_DOCUMENT_BYTES: usize = 16 * 1024 * 1024;

/// At most this many bytes of documents go in one `insert` command, well inside
/// MongoDB's 48 MB message (`maxMessageSizeBytes`), so that the driver sends each call
/// as one command and its answer speaks for every document of it.
const MAX_COMMAND_BYTES: usize = 40_000_000;

/// At most this many documents go in one `insert` command (`maxWriteBatchSize`).
const MAX_COMMAND_DOCUMENTS: usize = 100_000;

/// Inserts documents (each carrying the id of its key in `keys`) unordered, so that one
/// refusal does not hold back the others, and says what became of each.
///
/// The driver splits a large `insert_many` into several commands and, when a later one
/// fails, reports only that failure: what the earlier ones stored would be lost. So the
/// documents are serialized here and sent in commands of a size the driver sends whole,
/// one after the other; each command's answer speaks for its documents. Outside the
/// caller's session they are sent from a task of their own, as in [`insert_one`]. `guard`
/// is dropped when the writes end.
pub(crate) async fn insert_many<T: Serialize + Send + Sync>(
    documents: &[&T],
    keys: &[Key],
    send: Sending,
    guard: impl Send + 'static,
    cx: &mut Context<'_>,
) -> Vec<Fate> {
    let seq = cx.seq;
    let mut fates: Vec<Option<Fate>> = vec![None; documents.len()];
    let mut serialized = Vec::with_capacity(documents.len());
    let mut positions = Vec::with_capacity(documents.len());
    for (position, (document, key)) in documents.iter().zip(keys).enumerate() {
        let why = match mongodb::bson::to_raw_document_buf(document) {
            Ok(bytes) if bytes.as_bytes().len() > MAX_DOCUMENT_BYTES => format!(
                "not sent: the document is {} bytes, above the {MAX_DOCUMENT_BYTES}-byte \
                 limit of a BSON document",
                bytes.as_bytes().len()
            ),
            Ok(bytes) => {
                let key = key.clone();
                serialized.push(Serialized { bytes, key });
                positions.push(position);
                continue;
            }
            Err(error) => format!("not sent: the document cannot be serialized to BSON: {error}"),
        };
        fates[position] = Some(Fate::refused(Rejection::held_back(why)));
    }
    let raw = cx.raw_collection();
    let sent = if cx.session.join().is_some() {
        let to = To::new(&raw, seq, send);
        send_commands(&to, &serialized, &mut cx.session).await
    } else {
        let sent_keys: Vec<Key> = serialized.iter().map(|d| d.key.clone()).collect();
        let sent_documents: Vec<&T> = positions.iter().map(|&p| documents[p]).collect();
        let write = Finishing::new(async move {
            let to = To::new(&raw, seq, send);
            let fates = send_commands(&to, &serialized, &mut Session::none()).await;
            drop(guard);
            fates
        });
        pending::answer(write, cx.route, seq, &sent_keys, &sent_documents).await
    };
    for (position, fate) in positions.into_iter().zip(sent) {
        fates[position] = Some(fate);
    }
    fates
        .into_iter()
        .map(|fate| fate.expect("every document is sent or held back"))
        .collect()
}

/// A document serialized for sending, and the key of the id it carries.
struct Serialized {
    bytes: RawDocumentBuf,
    key: Key,
}

/// Sends `documents` in commands that the driver sends whole, and says what became of
/// each.
async fn send_commands(
    to: &To<'_, RawDocumentBuf>,
    documents: &[Serialized],
    session: &mut Session<'_>,
) -> Vec<Fate> {
    let mut fates = Vec::with_capacity(documents.len());
    let mut aborted: Option<Fate> = None;
    for command in commands(documents, MAX_COMMAND_BYTES, MAX_COMMAND_DOCUMENTS) {
        let command_fates = match &aborted {
            // The caller's transaction is aborted: nothing more can be stored in it.
            Some(fate) => vec![fate.clone(); command.len()],
            None => {
                let fates = insert_command(to, command, session).await;
                if session.in_transaction() {
                    aborted = fates.iter().find_map(|fate| match fate {
                        Fate::Stored => None,
                        Fate::Refused(rejection) if rejection.source.is_none() => None,
                        other => Some(other.clone()),
                    });
                }
                fates
            }
        };
        fates.extend(command_fates);
    }
    fates
}

/// The serialized documents in runs that each fit one `insert` command: at most
/// `max_bytes` of documents (a larger document goes alone) and `max_documents`.
fn commands(
    serialized: &[Serialized],
    max_bytes: usize,
    max_documents: usize,
) -> Vec<&[Serialized]> {
    let mut runs = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (i, document) in serialized.iter().enumerate() {
        let size = document.bytes.as_bytes().len();
        if i > start && (bytes + size > max_bytes || i - start == max_documents) {
            runs.push(&serialized[start..i]);
            (start, bytes) = (i, 0);
        }
        bytes += size;
    }
    if start < serialized.len() {
        runs.push(&serialized[start..]);
    }
    runs
}

/// Sends one `insert` command of `documents` and says what became of each.
async fn insert_command(
    to: &To<'_, RawDocumentBuf>,
    documents: &[Serialized],
    session: &mut Session<'_>,
) -> Vec<Fate> {
    let insert = to
        .collection
        .insert_many(documents.iter().map(|document| &document.bytes))
        .ordered(false)
        .optional(session.join(), |a, s| a.session(s));
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
                    *fate = Fate::refused(Rejection::write(refused.code, &refused.message));
                }
            }
        }
        return fates;
    }
    let fates = match &*error.kind {
        ErrorKind::InsertMany(bulk) => {
            let refused: Vec<_> = bulk
                .write_errors
                .iter()
                .flatten()
                .filter(|e| e.index < documents.len())
                .collect();
            let rejected: Vec<(&RawDocumentBuf, &Key, Rejection)> = refused
                .iter()
                .map(|e| {
                    let document = &documents[e.index];
                    let rejection = Rejection::write(e.code, &e.message);
                    (&document.bytes, &document.key, rejection)
                })
                .collect();
            // Without a write concern error, every document not refused was stored; with
            // one, they were written but may yet be rolled back.
            let others = match bulk.write_concern_error {
                None => Fate::Stored,
                Some(_) => Fate::unknown(why::WRITE_CONCERN, &error),
            };
            let mut fates = vec![others; documents.len()];
            let classified = classify(to, &rejected, &error).await;
            for (e, fate) in refused.iter().zip(classified) {
                fates[e.index] = fate;
            }
            fates
        }
        _ if never_sent(&error) => {
            vec![Fate::refused(Rejection::not_sent(&error)); documents.len()]
        }
        _ => {
            let bytes: Vec<&RawDocumentBuf> = documents.iter().map(|d| &d.bytes).collect();
            let keys: Vec<Key> = documents.iter().map(|d| d.key.clone()).collect();
            settle(to, &bytes, &keys, &error).await
        }
    };
    again(fates, to.send, &error)
}

/// For documents sent again, a refusal of this copy is an unknown outcome (see [`Sending`]).
fn again(fates: Vec<Fate>, send: Sending, error: &mongodb::error::Error) -> Vec<Fate> {
    if !send.again {
        return fates;
    }
    fates
        .into_iter()
        .map(|fate| match fate {
            Fate::Refused(_) => Fate::unknown(why::SENT_AGAIN, error),
            fate => fate,
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
        Fate::refused(Rejection {
            code: server_code(error),
            message: error.to_string(),
            index: None,
            source: Some(error.clone()),
        })
    } else {
        Fate::unknown(why::IN_TRANSACTION, error)
    }
}

/// Whether `error` says a single write (an append, a replace) was not written: the server
/// answered it with an error (not one of write concern: that write was applied), or the
/// driver never sent it. Any other error leaves its outcome unknown.
pub(crate) fn not_written(error: &mongodb::error::Error) -> bool {
    let answered = matches!(
        &*error.kind,
        ErrorKind::Command(_) | ErrorKind::Write(mongodb::error::WriteFailure::WriteError(_))
    );
    answered || never_sent(error)
}

/// Whether the driver failed before the request could reach the server (a retry that
/// fails so reports the first attempt's error instead).
pub(crate) fn never_sent(error: &mongodb::error::Error) -> bool {
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

/// After an error that does not say whether the documents were stored (no answer came):
/// unknown. A document found at its id proves nothing of who wrote it, so nothing is
/// looked up, unless the caller asserted that equal content is its own: then those
/// found stored, equal, are stored. A write concern error is not settled by looking: the
/// write is there, but not as durable as asked, and may yet be rolled back.
async fn settle<T: Serialize + Send + Sync>(
    to: &To<'_, T>,
    documents: &[&T],
    keys: &[Key],
    error: &mongodb::error::Error,
) -> Vec<Fate> {
    if let ErrorKind::Write(WriteFailure::WriteConcernError(_)) = &*error.kind {
        return vec![Fate::unknown(why::WRITE_CONCERN, error); documents.len()];
    }
    let unknown = Fate::unknown(why::NO_ANSWER, error);
    if !to.send.content_is_unique {
        return vec![unknown; documents.len()];
    }
    let stored = stored_documents(to, keys).await.unwrap_or_default();
    documents
        .iter()
        .zip(keys)
        .map(|(document, key)| match stored.get(key) {
            Some(found) if same_document(*document, found) => Fate::Stored,
            _ => unknown.clone(),
        })
        .collect()
}

/// Turns refusals into fates. A duplicate key on the id's index answering a first send
/// is another writer's document (see the module's notes): taken, and looked up only to
/// see that a document does hold the id. Answering a copy sent again, it may be the
/// earlier copy: unknown. Where the caller asserted that equal content is its own, a
/// document equal to ours there is ours.
///
/// No document there, though the server named the id's index, is not proof that the id
/// is free: a copy of this very insert (the driver's retry, a request the network
/// delivered late) may be what the server met, and may not be readable yet (or may have
/// been removed since). That outcome is unknown, with `error`, the server's answer, as
/// its cause; taking a new id instead could store the document twice.
async fn classify<T: Serialize + Send + Sync>(
    to: &To<'_, T>,
    rejected: &[(&T, &Key, Rejection)],
    error: &mongodb::error::Error,
) -> Vec<Fate> {
    let (seq, send) = (to.seq, to.send);
    let duplicates: Vec<Key> = rejected
        .iter()
        .filter(|(_, _, r)| r.is_duplicate_key())
        .map(|(_, key, _)| (*key).clone())
        .collect();
    let stored = match duplicates.is_empty() {
        true => Ok(HashMap::new()),
        false => stored_documents(to, &duplicates).await,
    };
    let identity = identity_index(seq);
    rejected
        .iter()
        .map(|(document, key, rejection)| {
            let rejection = rejection.clone();
            if !rejection.is_duplicate_key() {
                return Fate::refused(rejection);
            }
            let stored = match &stored {
                Ok(stored) => stored,
                Err(lookup) => return Fate::unknown(why::LOOKUP_FAILED, lookup),
            };
            match stored.get(*key) {
                Some(found) if send.content_is_unique && same_document(*document, found) => {
                    Fate::Stored
                }
                Some(_) if send.again && !send.content_is_unique => Fate::unknown(why::HELD, error),
                Some(_) => Fate::taken(rejection),
                // A duplicate on another unique index (MongoDB names it; a server that
                // does not is answered by the lookup).
                None if rejection.index.as_deref() == Some(identity.as_str()) => {
                    tracing::debug!(
                        id = key.id,
                        index = identity,
                        "duplicate id, but no document holds it when looked up: unknown"
                    );
                    Fate::unknown(why::UNHELD_DUPLICATE, error)
                }
                None => Fate::refused(rejection),
            }
        })
        .collect()
}

/// The filter for the documents at `keys`: by scope, the ids in it.
fn at_keys(seq: &'static Sequence, keys: &[Key]) -> BsonDocument {
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
    to: &To<'_, T>,
    keys: &[Key],
) -> Result<HashMap<Key, BsonDocument>, mongodb::error::Error> {
    use futures_util::TryStreamExt;

    let (collection, seq) = (to.collection, to.seq);
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
pub(crate) fn same_document<T: Serialize>(ours: &T, stored: &BsonDocument) -> bool {
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

/// The conditional update of a draft at `at` (its `_id`, its number still unset), in
/// the caller's session: whether it matched the draft, still unnumbered.
pub(crate) async fn number_draft(
    at: &BsonDocument,
    update: BsonDocument,
    cx: &mut Context<'_>,
) -> Result<bool, Error> {
    let collection = cx.collection::<BsonDocument>();
    update_draft(&collection, cx.seq, at, update, cx.session.join()).await
}

/// [`number_draft`] for every draft: all at once, or one after the other in the caller's
/// session.
pub(crate) async fn number_drafts(
    writes: &[(BsonDocument, BsonDocument)],
    cx: &mut Context<'_>,
) -> Vec<Result<bool, Error>> {
    if cx.session.join().is_some() {
        let mut results = Vec::with_capacity(writes.len());
        for (at, update) in writes {
            results.push(number_draft(at, update.clone(), cx).await);
        }
        return results;
    }
    let (seq, collection) = (cx.seq, cx.collection::<BsonDocument>());
    let updates = writes
        .iter()
        .map(|(at, update)| update_draft(&collection, seq, at, update.clone(), None));
    futures_util::future::join_all(updates).await
}

/// [`number_draft`] of the draft at `at` in `collection`, in `session` if given.
async fn update_draft(
    collection: &Collection<BsonDocument>,
    seq: &'static Sequence,
    at: &BsonDocument,
    update: BsonDocument,
    session: Option<&mut ClientSession>,
) -> Result<bool, Error> {
    let updating = collection.update_one(at.clone(), update);
    let result = updating.optional(session, |a, s| a.session(s)).await;
    let what = || format!("numbering the draft {at} in `{}`", seq.collection);
    Ok(result.doing(seq, what)?.matched_count == 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_are_sent_in_commands_within_the_limits() {
        let serialized: Vec<Serialized> = [10, 30, 50, 5, 5, 5, 5, 200, 1]
            .into_iter()
            .enumerate()
            .map(|(id, len)| Serialized {
                bytes: mongodb::bson::to_raw_document_buf(&doc! { "s": "x".repeat(len) }).unwrap(),
                key: Key {
                    scope: Scope::default(),
                    id: id as i64,
                },
            })
            .collect();
        let size = |d: &Serialized| d.bytes.as_bytes().len();
        let runs = commands(&serialized, 100, 3);
        let ids: Vec<Vec<i64>> = runs
            .iter()
            .map(|run| run.iter().map(|d| d.key.id).collect())
            .collect();
        assert_eq!(
            ids,
            [vec![0, 1], vec![2, 3, 4], vec![5, 6], vec![7], vec![8]]
        );
        for run in &runs {
            let bytes: usize = run.iter().map(size).sum();
            assert!(
                run.len() <= 3 && (bytes <= 100 || run.len() == 1),
                "{bytes}"
            );
        }
        assert!(commands(&[], 100, 3).is_empty());
    }

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
