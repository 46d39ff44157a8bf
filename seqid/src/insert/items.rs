//! Appending items to a stored document's array (`append_<field>`): the items checked
//! unset and serialized, the filter read down to its one document unless it names `_id` by
//! equality (a filter matching several is refused: [`ErrorKind::ItemsAmbiguous`]), one append
//! with a token of its own sent the way the server allows
//! ([`crate::round_trip::items`]: one pipeline update, or a read and a conditional update,
//! again on a lost race, the appends of this process to one array taking turns), and the
//! numbers it got written back into the caller's items.
//!
//! Outside a transaction the append is [`Finishing`]: a caller that goes away leaves it to
//! end in a task of its own, so that it lands once or not at all, never half. Its answer
//! lost (also after the driver's retry), the document is read: the append's token among its
//! recent appends says it landed, and with which numbers; else the outcome is unknown
//! ([`ErrorKind::ItemsOutcomeUnknown`], with the token: the same append sent again with it lands
//! at most once). In the caller's transaction, an error is the transaction's.

use std::time::{Duration, Instant};

use mongodb::bson::{Bson, Document as BsonDocument, doc, oid::ObjectId};
use mongodb::{ClientSession, Collection, Database};

use crate::base::backoff::backoff;
use crate::base::detach::Finishing;
use crate::base::error::{Error, ErrorKind};
use crate::base::server::noted;
use crate::base::session;
use crate::deployment::known::Known;
use crate::fields::items::unnumberable;
use crate::round_trip::items::{self, Append, Only, Seen};
use crate::schema::id::IdField;
use crate::schema::item::{Item, ItemsField, Unnumberable, numbers_after};
use crate::schema::sequence::Sequence;
use crate::state::registry::Route;
use crate::state::turns;

/// How long the conditional way keeps trying while other writers move the mark first.
const BUDGET: Duration = Duration::from_secs(60);

/// How long a conditional append waits for the append of this process ahead of it on the
/// same array before it goes on without its turn (a write that hangs holds the others back
/// no longer; the condition on the mark still lets one of two through).
const TURN_PATIENCE: Duration = Duration::from_secs(2);

/// How an append ended, before it is said as seqid's error.
enum Ended {
    /// The mark it set: its numbers are the last ones up to it.
    Landed(i64),
    Missing,
    /// The filter matches several documents: how many, if counting them answered.
    Several(Option<u64>),
    NotArray(Bson),
    /// The numbers after the mark read do not fit an `i64`.
    Unnumberable(Unnumberable),
    /// The server refused a command, or the driver never sent it, or a read failed where
    /// nothing of this append can have been written: nothing was written.
    NotWritten(mongodb::error::Error),
    /// No answer: written or not.
    Driver(mongodb::error::Error),
    /// Lost races for the whole budget: the attempts made, the last mark seen.
    Exhausted(u32, Duration, i64),
}

/// Appends `items` to the array `spec` of the one document `filter` finds, in `collection`
/// of `seq`'s database; numbers them in place; returns their numbers.
pub(crate) async fn append<I: Item>(
    route: Route<'_>,
    seq: &'static Sequence,
    spec: &'static ItemsField,
    filter: BsonDocument,
    items: &mut [I],
    session: Option<&mut ClientSession>,
    token: Option<ObjectId>,
) -> Result<Vec<i64>, Error> {
    let unnumberable = |why| unnumberable(seq, spec, why);
    for (position, item) in items.iter().enumerate() {
        if let Some(value) = item.item_no().get() {
            let value = value.into();
            return Err(unnumberable(Unnumberable::Set { position, value }));
        }
    }
    let serialized = items
        .iter()
        .map(mongodb::bson::to_document)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| {
            Error::new(
                seq,
                ErrorKind::InvalidOption {
                    option: "items",
                    value: error.to_string().into(),
                    reason: "each item must serialize as a document".into(),
                },
            )
        })?;
    let coll = route.db.collection::<BsonDocument>(seq.collection);
    let known = route.known().clone();
    let db = route.db.clone();
    let mut session = session;
    let in_transaction = match session.as_deref_mut() {
        Some(session) => session::in_transaction(session).await,
        None => false,
    };
    let shown = filter.to_string();
    let not_found = || {
        Error::new(
            seq,
            ErrorKind::ItemsNotFound {
                items: spec,
                filter: shown.clone().into(),
            },
        )
    };
    let several = |matched| {
        Error::new(
            seq,
            ErrorKind::ItemsAmbiguous {
                items: spec,
                filter: shown.clone().into(),
                matched,
            },
        )
    };
    // A filter that may match several documents is read down to one first (nothing is
    // written yet), except on the conditional way, whose own read tells.
    let conditional = known.refuses_pipelines(&db) || Known::of_process().refuses_pipelines(&db);
    let filter = match items::names_one(&filter) || conditional {
        true => filter,
        false => match items::only(&coll, &filter, session.as_deref_mut()).await {
            Ok(Only::One(id)) => doc! { "$and": [filter, { "_id": id }] },
            Ok(Only::None) => return Err(not_found()),
            Ok(Only::Several) => {
                let counted = items::count(&coll, &filter, session.as_deref_mut()).await;
                return Err(several(counted.ok()));
            }
            Err(error) => return Err(driver(seq, spec, error)),
        },
    };
    let append = Append {
        spec,
        filter,
        items: serialized,
        // `ObjectId::default()` is a new one.
        token: token.unwrap_or_default(),
    };
    let (ended, append) = match session {
        Some(session) if in_transaction => {
            // In the caller's transaction: nothing is read on an error, which aborted it.
            match run(&coll, &append, &known, &db, Some(session)).await {
                Ended::Driver(error) | Ended::NotWritten(error) => {
                    return Err(driver(seq, spec, error));
                }
                ended => (ended, append),
            }
        }
        Some(session) => {
            let ended = run(&coll, &append, &known, &db, Some(session)).await;
            (settle(&coll, &append, ended).await, append)
        }
        // The append goes to the task and comes back with its end: its items are not
        // copied for it.
        None => {
            Finishing::new(async move {
                let ended = run(&coll, &append, &known, &db, None).await;
                (settle(&coll, &append, ended).await, append)
            })
            .await
        }
    };
    let mark = match ended {
        Ended::Landed(mark) => mark,
        Ended::Missing => return Err(not_found()),
        Ended::Several(matched) => return Err(several(matched)),
        Ended::NotArray(found) => {
            return Err(Error::new(
                seq,
                ErrorKind::ItemsNotArray {
                    items: spec,
                    found: found.to_string().into(),
                    filter: shown.into(),
                },
            ));
        }
        Ended::Unnumberable(why) => return Err(unnumberable(why)),
        Ended::NotWritten(error) => return Err(driver(seq, spec, error)),
        Ended::Driver(error) => {
            return Err(Error::new(
                seq,
                ErrorKind::ItemsOutcomeUnknown {
                    items: spec,
                    token: append.token,
                    source: Box::new(error),
                },
            ));
        }
        Ended::Exhausted(attempts, elapsed, last_id) => {
            return Err(Error::new(
                seq,
                ErrorKind::RetriesExhausted {
                    items: Some(spec),
                    attempts,
                    elapsed,
                    time_budget: Some(BUDGET),
                    last_id,
                },
            ));
        }
    };
    let step = spec.number.step;
    let n = i64::try_from(items.len()).unwrap_or(i64::MAX);
    let base = mark.saturating_sub(n.saturating_mul(step));
    let numbers = numbers_after(&spec.number, base, items.len()).map_err(unnumberable)?;
    for (position, (item, &number)) in items.iter_mut().zip(&numbers).enumerate() {
        match I::No::from_seq(number).filter(|no| !no.is_unset()) {
            Some(no) => *item.item_no_mut() = no,
            None => {
                let value = number.into();
                return Err(unnumberable(Unnumberable::Overflow { position, value }));
            }
        }
    }
    Ok(numbers)
}

/// The append's rounds: the pipeline where the server takes it, else a read and a
/// conditional update, again while other writers move the mark first.
async fn run(
    coll: &Collection<BsonDocument>,
    append: &Append,
    known: &Known,
    db: &Database,
    mut session: Option<&mut ClientSession>,
) -> Ended {
    let spec = append.spec;
    let started = Instant::now();
    let mut attempt = 0_u32;
    let mut last_seen = spec.number.none_yet();
    // The error of a `$push` the server refused because the field is no longer an array:
    // the read that follows says what it holds, or, if it fails, this error.
    let mut refused = None;
    loop {
        attempt += 1;
        if attempt > 1 {
            if started.elapsed() > BUDGET {
                return Ended::Exhausted(attempt - 1, started.elapsed(), last_seen);
            }
            backoff(attempt).await;
        }
        let pipelines = !known.refuses_pipelines(db) && !Known::of_process().refuses_pipelines(db);
        if pipelines {
            match items::pipeline(coll, append, session.as_deref_mut()).await {
                Ok(Some(mark)) => return Ended::Landed(mark),
                // Matched nothing: the read below tells why.
                Ok(None) => {}
                Err(error) if items::refuses_pipelines(&error) => {
                    known.keep_no_pipelines(db);
                    attempt = 0;
                    continue;
                }
                Err(error) => return failed(error),
            }
        }
        // The conditional way: the appends of this process to this array take turns, each
        // its read and its update (see `state::turns`), released before a lost race's wait.
        let _turn = match pipelines {
            true => None,
            false => {
                let patience = TURN_PATIENCE.min(BUDGET.saturating_sub(started.elapsed()));
                let (db, collection) = (db.name(), coll.name());
                turns::append_turn(db, collection, spec.field, &append.filter, patience).await
            }
        };
        // Read when the pipeline matched nothing, or before the conditional update: this
        // append has written nothing yet.
        let seen = match items::read(coll, append, session.as_deref_mut()).await {
            Ok(seen) => seen,
            Err(error) => return Ended::NotWritten(refused.take().unwrap_or(error)),
        };
        refused = None;
        let (base, numbered) = match &seen {
            Seen::Missing => return Ended::Missing,
            Seen::Several => {
                let counted = items::count(coll, &append.filter, session.as_deref_mut()).await;
                return Ended::Several(counted.ok());
            }
            Seen::NotArray(found) => return Ended::NotArray(found.clone()),
            Seen::Landed(mark) => return Ended::Landed(*mark),
            // The pipeline matched nothing, yet the document is there: changed between
            // the two (its array made one, say); the next round sees it as it is.
            Seen::Open { .. } if pipelines => continue,
            Seen::Open { mark, largest, .. } => {
                // As the pipeline's: the mark, "none yet", the largest stored number.
                let none_yet = spec.number.none_yet();
                let base = mark.unwrap_or(none_yet).max(none_yet);
                let base = base.max(largest.unwrap_or(i64::MIN));
                let numbers = match numbers_after(&spec.number, base, append.items.len()) {
                    Ok(numbers) => numbers,
                    Err(why) => return Ended::Unnumberable(why),
                };
                let numbered: Vec<BsonDocument> = append
                    .items
                    .iter()
                    .zip(&numbers)
                    .map(|(item, &number)| {
                        let mut item = item.clone();
                        item.insert(spec.number.key, number);
                        item
                    })
                    .collect();
                (numbers.last().copied().unwrap_or(base), numbered)
            }
        };
        last_seen = base;
        match items::conditional(coll, append, &seen, numbered, base, session.as_deref_mut()).await
        {
            Ok(true) => return Ended::Landed(base),
            Ok(false) => {}
            Err(error) if items::not_an_array(&error, spec) => refused = Some(error),
            Err(error) => return failed(error),
        }
    }
}

/// An error of a command of the append, as an end: refused (nothing written) or not
/// answered.
fn failed(error: mongodb::error::Error) -> Ended {
    match items::not_written(&error) {
        true => Ended::NotWritten(error),
        false => Ended::Driver(error),
    }
}

/// An append that ended on a driver error, outside a transaction: the document read to
/// tell whether it landed (its token among the recent appends).
async fn settle(coll: &Collection<BsonDocument>, append: &Append, ended: Ended) -> Ended {
    let Ended::Driver(error) = ended else {
        return ended;
    };
    match items::read(coll, append, None).await {
        Ok(Seen::Landed(mark)) => Ended::Landed(mark),
        _ => Ended::Driver(error),
    }
}

fn driver(
    seq: &'static Sequence,
    spec: &'static ItemsField,
    error: mongodb::error::Error,
) -> Error {
    Error::driver(
        seq,
        format!(
            "appending items to `{}` in `{}`",
            spec.field, seq.collection
        ),
        noted(error),
    )
}
