//! Writing a stored document back whole (`doc.replace(&db)`), found by its `_id`, without
//! moving an array's mark back.
//!
//! A document read, changed and written back with a plain `replace_one` carries the marks
//! it was read with: an append that landed in between is undone (its items dropped, the
//! mark moved back, so the next append hands its numbers out again), and the hidden lists
//! of recent appends are dropped (an append sent again with its token after a lost answer
//! would append twice). So for a type with items the stored marks and hidden lists are read
//! first ([`crate::round_trip::replace`]); a document whose mark is below the stored one is
//! refused ([`ErrorKind::ItemsStale`]); otherwise the replacement, the document with the
//! hidden lists as read, goes in a `replace_one` conditioned on every mark as read. One
//! that matches nothing met an append that landed in between: the document is read again,
//! and refused as stale (or missing), not retried, since only its caller can apply the
//! change to what is stored now; it is sent again, a few times, only if nothing is seen to
//! have moved (a document deleted and inserted again as it was). A type without items is
//! one `replace_one` by `_id`.
//!
//! Outside a transaction the replace is [`Finishing`]: a caller that goes away leaves it
//! to end in a task of its own. A replace sent and not answered is
//! [`ErrorKind::ReplaceOutcomeUnknown`]: it landed once or not at all, and sent again it is
//! checked again. In the caller's transaction, an error is the transaction's.

use mongodb::bson::{Bson, Document as BsonDocument};
use mongodb::{ClientSession, Collection};

use crate::base::detach::Finishing;
use crate::base::error::{Error, ErrorKind};
use crate::base::numeric::integral;
use crate::base::server::noted;
use crate::base::session;
use crate::call::registry::Route;
use crate::round_trip::replace::{self, Guards};
use crate::round_trip::write::not_written;
use crate::schema::id::IdField;
use crate::schema::item::ItemsField;
use crate::schema::model::Model;
use crate::schema::sequence::Sequence;

/// The document as the replace sends it: serialized, its `_id`, and each array's mark as
/// the document holds it ("none yet" where unset).
struct Outgoing {
    seq: &'static Sequence,
    specs: &'static [ItemsField],
    document: BsonDocument,
    id: Bson,
    marks: Vec<i64>,
}

/// How many times a replace is read and sent when it matches nothing with nothing seen to
/// move in between (the document deleted and inserted again, say).
const ROUNDS: usize = 3;

/// How a replace ended, before it is said as seqid's error.
enum Ended {
    Replaced,
    Missing,
    /// The array at this position is stale: the stored mark, as an integer.
    Stale(usize, i64),
    /// The server refused a command, or the driver never sent it, or a read failed:
    /// nothing was written.
    NotWritten(mongodb::error::Error),
    /// The replace was sent and not answered.
    Unknown(mongodb::error::Error),
}

/// Replaces the stored document at `doc`'s `_id` by `doc`, in `seq`'s collection.
pub(crate) async fn replace<T: Model>(
    route: Route<'_>,
    doc: &T,
    session: Option<&mut ClientSession>,
) -> Result<(), Error> {
    let outgoing = outgoing(doc)?;
    let coll = route.db.collection::<BsonDocument>(outgoing.seq.collection);
    let mut session = session;
    let in_transaction = match session.as_deref_mut() {
        Some(session) => session::in_transaction(session).await,
        None => false,
    };
    let (ended, outgoing) = match session {
        Some(session) => (run(&coll, &outgoing, Some(session)).await, outgoing),
        None => Finishing::new(async move { (run(&coll, &outgoing, None).await, outgoing) }).await,
    };
    let (seq, id) = (outgoing.seq, || outgoing.id.to_string().into());
    let doing = || format!("replacing _id {} in `{}`", outgoing.id, seq.collection);
    match ended {
        Ended::Replaced => Ok(()),
        Ended::Missing => Err(Error::new(seq, ErrorKind::ReplaceNotFound { id: id() })),
        Ended::Stale(at, stored) => Err(Error::new(
            seq,
            ErrorKind::ItemsStale {
                items: &outgoing.specs[at],
                stored,
                written: outgoing.marks[at],
                id: id(),
            },
        )),
        // In the caller's transaction, every error is the transaction's: it aborted it.
        Ended::NotWritten(error) => Err(Error::driver(seq, doing(), noted(error))),
        Ended::Unknown(error) if in_transaction => Err(Error::driver(seq, doing(), noted(error))),
        Ended::Unknown(error) => Err(Error::new(
            seq,
            ErrorKind::ReplaceOutcomeUnknown {
                id: id(),
                source: Box::new(error),
            },
        )),
    }
}

/// `doc` serialized, checked to name a stored document, with its marks.
fn outgoing<T: Model>(doc: &T) -> Result<Outgoing, Error> {
    let seq = &T::SEQUENCE;
    let without = |found: &str| {
        Error::new(
            seq,
            ErrorKind::ReplaceWithoutId {
                found: found.into(),
            },
        )
    };
    if seq.field == "_id" && doc.sequence_id().is_unset() {
        return Err(without(<T::Id as IdField>::UNSET));
    }
    let document = mongodb::bson::to_document(doc).map_err(|error| {
        Error::new(
            seq,
            ErrorKind::InvalidOption {
                option: "document",
                value: error.to_string().into(),
                reason: "a document replaced must serialize as a BSON document".into(),
            },
        )
    })?;
    let id = match document.get("_id") {
        None => return Err(without("missing")),
        Some(Bson::Null) => return Err(without("null")),
        Some(id) => id.clone(),
    };
    let marks = (0..T::ITEMS.len())
        .map(|at| {
            let none_yet = T::ITEMS[at].number.none_yet();
            let mark = doc.items(at).and_then(|(_, last)| last.value());
            mark.map_or(none_yet, |mark| i64::try_from(mark).unwrap_or(i64::MAX))
        })
        .collect();
    Ok(Outgoing {
        seq,
        specs: T::ITEMS,
        document,
        id,
        marks,
    })
}

/// The replace's round trips: a `replace_one` by `_id` for a type without items; else the
/// read, the check of the marks, the conditional `replace_one`, and on no match the read
/// again that says why.
async fn run(
    coll: &Collection<BsonDocument>,
    outgoing: &Outgoing,
    mut session: Option<&mut ClientSession>,
) -> Ended {
    let (id, specs) = (&outgoing.id, outgoing.specs);
    if specs.is_empty() {
        return match replace::by_id(coll, id, &outgoing.document, session).await {
            Ok(true) => Ended::Replaced,
            Ok(false) => Ended::Missing,
            Err(error) => failed(error),
        };
    }
    let mut before: Option<Guards> = None;
    for _ in 0..ROUNDS {
        let read = match replace::read(coll, id, specs, session.as_deref_mut()).await {
            Ok(Some(read)) => read,
            Ok(None) => return Ended::Missing,
            Err(error) => return Ended::NotWritten(error),
        };
        if let Some(stale) = stale(outgoing, &read) {
            return stale;
        }
        // The replace before this round matched nothing: a mark moved between its read
        // and its write, an append landed there (its items and its token are not in
        // this document). Only the caller can apply its change to what is stored now.
        if let Some(before) = &before {
            let moved = (0..specs.len()).find(|&at| read.marks[at] != before.marks[at]);
            if let Some(at) = moved {
                return Ended::Stale(at, stored_mark(&specs[at], &read.marks[at]));
            }
        }
        let mut replacement = outgoing.document.clone();
        read.keep_appends(&mut replacement, specs);
        let sent =
            replace::conditional(coll, id, specs, &read, &replacement, session.as_deref_mut());
        match sent.await {
            Ok(true) => return Ended::Replaced,
            Ok(false) => before = Some(read),
            Err(error) => return failed(error),
        }
    }
    // Matched nothing every round, with nothing seen to move: the document changes
    // under the replace all the time (deleted and inserted again, say).
    let stored = before.map_or(0, |read| stored_mark(&specs[0], &read.marks[0]));
    Ended::Stale(0, stored)
}

/// The first array whose document's mark is below the stored one, as an end.
fn stale(outgoing: &Outgoing, read: &Guards) -> Option<Ended> {
    (0..outgoing.specs.len()).find_map(|at| {
        let stored = stored_mark(&outgoing.specs[at], &read.marks[at]);
        (outgoing.marks[at] < stored).then_some(Ended::Stale(at, stored))
    })
}

/// A stored mark as an integer: missing, null, not an integer or below "none yet" counts
/// as none yet, as an append counts it.
fn stored_mark(spec: &ItemsField, stored: &Bson) -> i64 {
    let none_yet = spec.number.none_yet();
    integral(stored).unwrap_or(none_yet).max(none_yet)
}

/// An error of the replace's `replace_one`: refused or never sent (nothing written), or
/// not answered.
fn failed(error: mongodb::error::Error) -> Ended {
    match not_written(&error) {
        true => Ended::NotWritten(error),
        false => Ended::Unknown(error),
    }
}
