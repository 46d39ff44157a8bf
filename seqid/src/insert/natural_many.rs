//! `find_or_insert_many`: `find_or_insert` for many documents, with one lookup for all
//! their keys and one `insert_many` for those not found.
//!
//! The keys are looked up in one query (`$in` on a one-field key, `$or` of equalities
//! on a compound one); every document found is replaced by the stored one. The first
//! document of each key not found is inserted, all of them in one `insert_many` (one
//! reservation per scope, as `insert_many`); a later document of the same key in the slice
//! gets the first's stored document (`Found`). What the insert could not store is settled
//! as `find_or_insert` settles one document, with one more lookup for all of them: a
//! duplicate key is a race lost to another caller, a lost answer is this call's document
//! where the caller asserted that equal content is its own. What remains (refused for
//! another reason, or unknown) is [`ErrorKind::Bulk`], whose `inserted` lists every document
//! that holds its stored document (found ones too), so that calling again with the same
//! slice finishes the job.

use std::collections::{BTreeMap, HashMap};

use mongodb::bson::{Bson, Document as BsonDocument, doc};
use serde::de::DeserializeOwned;

use super::many::many_again;
use super::natural::{KEY_PATIENCE, holds, is_ours, serialized};
use crate::base::bulk_error::{BulkError, FailedInsert};
use crate::base::error::{Doing, Error, ErrorKind};
use crate::base::server::DUPLICATE_KEY;
use crate::call::context::Context;
use crate::call::span::{self};
use crate::fields::companions::CompanionsOfMany;
use crate::fields::ids::{ensure_unset, numbered_on_insert};
use crate::fields::natural::{Entry, NaturalKey, normalized};
use crate::fields::scope::Scope;
use crate::round_trip::indexes;
use crate::round_trip::stored::{self, Stored};
use crate::schema::id::{AnyIdField, IdField};
use crate::schema::model::Model;
use crate::schema::sequence::Sequence;
use crate::source;
use crate::state::turns;

/// Where each document stands.
#[derive(Clone, Debug)]
enum Standing {
    /// Not settled yet.
    Open,
    Done(Entry),
    Failed(FailedInsert),
    Unknown,
}

/// `find_or_insert_many`: each of `docs` becomes the stored document with its key.
pub(crate) async fn find_or_insert_many<T: Model + DeserializeOwned>(
    docs: &mut [T],
    key: Result<NaturalKey, Error>,
    cx: &mut Context<'_>,
) -> Result<Vec<Entry>, Error> {
    // A key that could not be made is the answer, before anything else is checked.
    let key = key?;
    let seq = cx.seq;
    numbered_on_insert::<T>("find_or_insert_many")?;
    source::require_transaction::<T>(cx)?;
    // Before anything is read or taken: ids set where they may not be, keys, scopes.
    for doc in docs.iter().filter(|doc| doc.sequence_id().is_unset()) {
        ensure_unset(doc)?;
    }
    let filters: Vec<_> = docs
        .iter()
        .map(|doc| key.filter(seq, &serialized(seq, key, doc)?))
        .collect::<Result<_, Error>>()?;
    let scopes = docs.iter().map(|doc| Scope::of(seq, doc));
    let scopes: Vec<_> = scopes.collect::<Result<_, _>>()?;
    indexes::require_key(cx.route, seq, key).await?;
    let normal: Vec<Vec<u8>> = filters.iter().map(normalized).collect();
    // The first document of each key, in the order of the keys' bytes: turns are taken in
    // that order, so that two calls holding some of the same keys never wait on each
    // other in a circle.
    let mut first_of: BTreeMap<&[u8], usize> = BTreeMap::new();
    for (position, bytes) in normal.iter().enumerate() {
        first_of.entry(bytes).or_insert(position);
    }
    let mut turns = Vec::with_capacity(first_of.len());
    for &position in first_of.values() {
        let turn = turns::key_turn(cx.route.db.name(), seq, &filters[position], KEY_PATIENCE).await;
        turns.push(turn);
    }
    let firsts: Vec<usize> = first_of.values().copied().collect();
    let mut standing = vec![Standing::Open; docs.len()];
    let found = lookup_all::<T>(key, &filters, &firsts, cx).await?;
    let mut to_insert = Vec::new();
    for &position in &firsts {
        match found.get(&normal[position]) {
            Some(found) => {
                let doc = &mut docs[position];
                let own = !doc.sequence_id().is_unset()
                    && holds(found, &scopes[position], doc.sequence_id().value())
                    && is_ours(doc, found, cx);
                *doc = copy_of(found)?;
                let entry = if own { Entry::Inserted } else { Entry::Found };
                standing[position] = Standing::Done(entry);
            }
            None => to_insert.push(position),
        }
    }
    to_insert.sort_unstable();
    if !to_insert.is_empty() {
        match insert_at(docs, &to_insert, cx).await {
            Ok(()) => {
                for &position in &to_insert {
                    standing[position] = Standing::Done(Entry::Inserted);
                }
            }
            Err(error) => match error.kind() {
                ErrorKind::Bulk(bulk) => {
                    record(bulk, &mut standing);
                    settle_all(docs, &filters, &normal, &scopes, key, &mut standing, cx).await;
                }
                _ => return Err(error),
            },
        }
    }
    drop(turns);
    follow_firsts(docs, &normal, &first_of, &mut standing);
    conclude(seq, standing)
}

/// Records what `insert_many` did with each document (`bulk`'s indices are positions in
/// the slice).
fn record(bulk: &BulkError, standing: &mut [Standing]) {
    for &position in &bulk.inserted {
        standing[position] = Standing::Done(Entry::Inserted);
    }
    for failed in &bulk.failed {
        standing[failed.index] = Standing::Failed(failed.clone());
    }
    for &position in &bulk.unknown {
        standing[position] = Standing::Unknown;
    }
}

/// Inserts the documents at `positions` (ascending), each the first of its key, with one
/// `insert_many`: moved to the front of the slice for it, and back after. A
/// [`BulkError`]'s indices come back as positions in the slice.
async fn insert_at<T: Model>(
    docs: &mut [T],
    positions: &[usize],
    cx: &mut Context<'_>,
) -> Result<(), Error> {
    // Positions ascending: swapping each to the front moves only documents not inserted.
    for (slot, &position) in positions.iter().enumerate() {
        docs.swap(slot, position);
    }
    let mut ids = CompanionsOfMany::fill(&mut docs[..positions.len()]);
    if ids.docs().iter().all(|doc| doc.sequence_id().is_unset()) {
        cx.content_is_unique |= ids.made_content_unique();
    }
    let mut result = many_again(ids.docs(), cx).await;
    span::codes(ids.docs());
    drop(ids);
    for (slot, &position) in positions.iter().enumerate().rev() {
        docs.swap(slot, position);
    }
    if let Err(ErrorKind::Bulk(bulk)) = result.as_mut().map_err(Error::kind_mut) {
        let at = |slot: usize| positions[slot];
        bulk.inserted.iter_mut().for_each(|i| *i = at(*i));
        bulk.failed.iter_mut().for_each(|f| f.index = at(f.index));
        bulk.unknown.iter_mut().for_each(|i| *i = at(*i));
    }
    result.map(drop)
}

/// Settles what the insert left failed with a duplicate key (a race lost) or unknown (an
/// answer lost), with one lookup for all of them, as `find_or_insert` settles one
/// document. Nothing is looked up inside the caller's transaction, which the failure
/// aborted.
async fn settle_all<T: Model + DeserializeOwned>(
    docs: &mut [T],
    filters: &[BsonDocument],
    normal: &[Vec<u8>],
    scopes: &[Scope],
    key: NaturalKey,
    standing: &mut [Standing],
    cx: &mut Context<'_>,
) {
    let open: Vec<usize> = (0..docs.len())
        .filter(|&p| match &standing[p] {
            Standing::Failed(failed) => failed.code == Some(DUPLICATE_KEY),
            other => matches!(other, Standing::Unknown),
        })
        .collect();
    if cx.session.in_transaction() || open.is_empty() {
        return;
    }
    // The lookup's own failure says less than the insert's.
    let Ok(found) = lookup_all::<T>(key, filters, &open, cx).await else {
        return;
    };
    for position in open {
        let Some(found) = found.get(&normal[position]) else {
            continue;
        };
        let doc = &mut docs[position];
        let (known, id) = match &standing[position] {
            Standing::Failed(failed) => (true, failed.id),
            _ => (false, doc.sequence_id().value().map_or(0, |v| v as i64)),
        };
        let at_our_id = holds(found, &scopes[position], Some(id.into()));
        if !known && at_our_id {
            // Its own only where equal content is; else unknown, its ids kept.
            if is_ours(doc, found, cx) {
                standing[position] = Standing::Done(Entry::Inserted);
            }
            continue;
        }
        source::race_lost(cx, &scopes[position], id, known && !at_our_id);
        if let Ok(copy) = copy_of(found) {
            *doc = copy;
            standing[position] = Standing::Done(Entry::Found);
        }
    }
}

/// Every later document of a key gets the first's stored document (`Found`), or its
/// failure.
fn follow_firsts<T: Model + DeserializeOwned>(
    docs: &mut [T],
    normal: &[Vec<u8>],
    first_of: &BTreeMap<&[u8], usize>,
    standing: &mut [Standing],
) {
    for position in 0..docs.len() {
        let first = first_of[normal[position].as_slice()];
        if first == position {
            continue;
        }
        let message = if matches!(standing[first], Standing::Done(_)) {
            let stored = mongodb::bson::to_document(&docs[first]).ok();
            match stored.and_then(|stored| mongodb::bson::from_document(stored).ok()) {
                Some(copy) => {
                    docs[position] = copy;
                    standing[position] = Standing::Done(Entry::Found);
                    continue;
                }
                None => "the stored document of its key could not be read back",
            }
        } else {
            "an earlier document of this call with the same key was not stored"
        };
        standing[position] = Standing::Failed(failed_with(position, message));
    }
}

fn failed_with(index: usize, message: &str) -> FailedInsert {
    FailedInsert {
        index,
        id: 0,
        code: None,
        message: message.to_owned(),
    }
}

/// Every entry, or [`ErrorKind::Bulk`] with what is not settled.
fn conclude(seq: &'static Sequence, standing: Vec<Standing>) -> Result<Vec<Entry>, Error> {
    if standing.iter().all(|s| matches!(s, Standing::Done(_))) {
        let entries = standing.into_iter().map(|s| match s {
            Standing::Done(entry) => entry,
            _ => unreachable!("all done"),
        });
        return Ok(entries.collect());
    }
    let mut bulk = BulkError {
        inserted: Vec::new(),
        failed: Vec::new(),
        unknown: Vec::new(),
    };
    for (position, standing) in standing.into_iter().enumerate() {
        match standing {
            Standing::Done(_) => bulk.inserted.push(position),
            Standing::Failed(failed) => bulk.failed.push(failed),
            // Never inserted: a call cut short before its insert.
            Standing::Open => bulk.failed.push(failed_with(position, "not inserted")),
            Standing::Unknown => bulk.unknown.push(position),
        }
    }
    Err(Error::new(seq, ErrorKind::Bulk(Box::new(bulk))))
}

/// A found document, as a new value.
fn copy_of<T: Model + DeserializeOwned>(found: &Stored<T>) -> Result<T, Error> {
    found.copy().doing(&T::SEQUENCE, || {
        format!("reading back the document {}", found.stored)
    })
}

/// The documents holding the keys of `filters` at `positions`, in one query (see
/// [`stored::all`]), by their normalized key.
async fn lookup_all<T: Model + DeserializeOwned>(
    key: NaturalKey,
    filters: &[BsonDocument],
    positions: &[usize],
    cx: &mut Context<'_>,
) -> Result<HashMap<Vec<u8>, Stored<T>>, Error> {
    let filter = match key.fields {
        [field] => {
            let values: Vec<Bson> = positions
                .iter()
                .filter_map(|&p| filters[p].get(*field).cloned())
                .collect();
            doc! { *field: { "$in": values } }
        }
        _ => doc! { "$or": positions.iter().map(|&p| filters[p].clone()).collect::<Vec<_>>() },
    };
    let what = format!("finding by the natural key {}", key.shown());
    let mut found = HashMap::with_capacity(positions.len());
    for stored in stored::all::<T>(filter, None, None, &what, cx).await? {
        if let Ok(filter) = key.filter(cx.seq, &stored.stored) {
            found.insert(normalized(&filter), stored);
        }
    }
    Ok(found)
}
