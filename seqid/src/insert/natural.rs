//! `find_or_insert`: the document with a natural key, inserted with the next id only when
//! no document holds the key.
//!
//! The call looks the key up first (one `find_one` on the key's unique index), and takes
//! an id only when nothing holds it: a key found costs no id. The calls of one process for
//! one key take turns (`state::turns::key_turn`), so that a new key is inserted by the
//! first and found by the others. Callers in other processes (or past a turn's patience) may
//! still both find nothing, both take an id and write: the key's unique index stores one
//! document and refuses the other with a duplicate key, and the loser reads the winner's
//! document by the key. What the loser's id becomes is the strategy's: the block strategy
//! gives it back to the handle's live block, the optimistic strategy's candidate goes back
//! to the handle's frontier (or, bare, was never stored: the next maximum hands it out), a
//! gapless id goes back with the caller's transaction (which the conflict aborts), and a
//! counter's `$inc` cannot be undone: a gap. Each is counted in
//! [`Stats::races_lost`](crate::Stats::races_lost).
//!
//! An answer lost on the way is settled by the key where it can be: a document found with
//! the key at another id is the winner (this call's write, if it ever lands, is refused by
//! the key's index); one at this call's own id is this call's only where the caller
//! asserted that equal content is its own (`content_is_unique`, or an `ObjectId` `_id` the
//! call made), as for every insert; nothing found, or a document that cannot be told
//! apart, leaves the outcome unknown, the document keeping its ids. Called again with
//! that document, `find_or_insert` finds the key (then answers `Found`: whoever stored it,
//! this call found it) or sends the document again under its ids, as `resume_insert`.

use std::time::Duration;

use mongodb::bson::Document as BsonDocument;
use serde::de::DeserializeOwned;

use super::one::{fresh, resume_one};
use crate::base::error::{Error, ErrorKind};
use crate::call::context::Context;
use crate::call::span::{self};
use crate::fields::companions::Companions;
use crate::fields::ids::{ensure_unset, numbered_on_insert};
use crate::fields::natural::{Entry, NaturalKey};
use crate::fields::scope::Scope;
use crate::round_trip::indexes;
use crate::round_trip::stored::{self, Stored, Within};
use crate::round_trip::write;
use crate::schema::id::{AnyIdField, IdField};
use crate::schema::model::Model;
use crate::schema::sequence::Sequence;
use crate::source::{self, counted};
use crate::state::turns;

/// How long a call waits for the call of this process ahead of it on the same key before
/// it goes on without its turn (a write that hangs holds the others back no longer; the
/// key's unique index still keeps one document).
pub(super) const KEY_PATIENCE: Duration = Duration::from_secs(2);

/// `find_or_insert`: `doc` becomes the stored document with its natural key.
pub(crate) async fn find_or_insert<T: Model + DeserializeOwned>(
    doc: &mut T,
    key: Result<NaturalKey, Error>,
    cx: &mut Context<'_>,
) -> Result<Entry, Error> {
    // A key that could not be made is the answer, before anything else is checked.
    let key = key?;
    let seq = cx.seq;
    // Before anything is read or taken: what the call cannot do.
    numbered_on_insert::<T>("find_or_insert")?;
    source::require_transaction::<T>(cx)?;
    let carried = !doc.sequence_id().is_unset();
    if !carried {
        ensure_unset(doc)?;
    }
    let filter = key.filter(seq, &serialized(seq, key, doc)?)?;
    let scope = Scope::of(seq, doc)?;
    indexes::require_key(cx.route, seq, key).await?;
    // The calls of this process for this key take turns (see `state::turns`), until the end
    // of this call.
    let _turn = turns::key_turn(cx.route.db.name(), seq, &filter, KEY_PATIENCE).await;
    // Gapless: the counter's turn before the key is looked up in the caller's transaction
    // (a found key then lets the next go at once).
    counted::place_before_reading(&scope, cx).await;
    let found = stored::one::<T>(&filter, "finding the document", cx, Within::Session).await?;
    if let Some(found) = found {
        // The document of this call's own earlier, unknown insert, when the caller
        // asserted that equal content is its own; else, whoever stored it, found by this
        // call.
        let own =
            carried && holds(&found, &scope, doc.sequence_id().value()) && is_ours(doc, &found, cx);
        let entry = if own { Entry::Inserted } else { Entry::Found };
        *doc = found.doc;
        return Ok(entry);
    }
    let mut ids = Companions::fill(doc);
    let result = match carried {
        true => resume_one(ids.doc(), cx).await,
        false => {
            cx.content_is_unique |= ids.made_content_unique();
            fresh(ids.doc(), scope.clone(), cx).await
        }
    };
    span::codes(std::slice::from_ref(ids.doc()));
    drop(ids);
    match result {
        Ok(_) => Ok(Entry::Inserted),
        Err(error) => settle(doc, error, &filter, &scope, cx).await,
    }
}

/// What an insert that ended in `error` leaves: the document another caller stored with
/// the key meanwhile (the race lost), the document this call stored after all (its answer
/// lost, and its content its own), or `error`. Nothing is looked up inside the caller's
/// transaction, which the error aborted: its retry finds the winner.
pub(super) async fn settle<T: Model + DeserializeOwned>(
    doc: &mut T,
    error: Error,
    filter: &BsonDocument,
    scope: &Scope,
    cx: &mut Context<'_>,
) -> Result<Entry, Error> {
    let Some(seq) = error.sequence() else {
        return Err(error);
    };
    let (id, known) = match error.kind() {
        _ if cx.session.in_transaction() => return Err(error),
        ErrorKind::DuplicateKey { id, .. } => (*id, true),
        ErrorKind::OutcomeUnknown { id, .. } => (*id, false),
        _ => return Err(error),
    };
    let found = match stored::one::<T>(filter, "finding the document", cx, Within::Session).await {
        Ok(Some(found)) => found,
        // The race lost, and the winner could not be read (its answer lost, say): the
        // read's error is the truer cause. The insert stored nothing, so calling again,
        // which looks the key up first, is safe; the id is a gap (whether a document holds
        // it is unknown).
        Err(read) if known => return Err(read),
        // Unknown, the lookup's failure says less than the insert's error; nothing found
        // (the key's document deleted since the duplicate key) leaves the insert's error.
        Err(_) | Ok(None) => return Err(error),
    };
    // By name: a constant's address may differ from one use to the next.
    let primary = seq.name == cx.seq.name && seq.field == cx.seq.field;
    let at_our_id = primary && holds(&found, scope, Some(id.into()));
    if !known && at_our_id {
        // The answer was lost and a document holds the key at this call's id: its own
        // only if the caller asserted that equal content is; else unknown, the ids kept.
        let ours = is_ours(doc, &found, cx);
        return ours.then_some(Entry::Inserted).ok_or(error);
    }
    // The race lost. The block strategy's id goes back when this call's write is known to
    // have stored nothing and no document holds the id (a write whose answer was lost may
    // still land, and be refused by the key's index).
    source::race_lost(cx, scope, id, known && primary && !at_our_id);
    *doc = found.doc;
    Ok(Entry::Found)
}

/// Whether `found`, at this call's ids, is this call's own document: equal to it field by
/// field, where the caller asserted that no other writer stores equal content.
pub(super) fn is_ours<T: Model>(doc: &T, found: &Stored<T>, cx: &Context<'_>) -> bool {
    cx.content_is_unique && write::same_document(doc, &found.stored)
}

/// Whether `found` holds `id` in `scope` (its number as this call's document holds it).
pub(super) fn holds<T: Model>(found: &Stored<T>, scope: &Scope, id: Option<i128>) -> bool {
    id.is_some()
        && found.doc.sequence_id().value() == id
        && Scope::of(&T::SEQUENCE, &found.doc).is_ok_and(|of| of == *scope)
}

/// `doc` as it is stored, to read its key.
pub(super) fn serialized<T: Model>(
    seq: &'static Sequence,
    key: NaturalKey,
    doc: &T,
) -> Result<BsonDocument, Error> {
    mongodb::bson::to_document(doc).map_err(|error| {
        Error::new(
            seq,
            ErrorKind::InvalidNaturalKey {
                key: key.shown().into(),
                reason: format!("the document could not be serialized to read its key: {error}")
                    .into(),
            },
        )
    })
}
