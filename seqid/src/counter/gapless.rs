//! The gapless strategy, whole: ids taken from the counter inside the caller's
//! transaction ([`take`]: the counter read in the transaction first, made in it if its
//! snapshot has none, then advanced in it), the process's transactions
//! on one counter one after the other ([`commit_queue`]), a place taken before a call's
//! first read ([`place_before_reading`]), and the ids reserved in a transaction for
//! documents built later, with their tickets ([`reserved_ids`], [`still_reserved`]).
//! Every function takes what it works on: the database, the counter, the caller's session.

use std::sync::Arc;

use std::sync::atomic::Ordering;

use mongodb::Database;
use mongodb::action::Action;
use mongodb::bson::{Document as BsonDocument, doc};

use crate::base::detach::Finishing;
use crate::base::error::{Doing, Error, ErrorKind};
use crate::base::session::Session;
use crate::counter::admin;
use crate::counter::admin::last_in;
use crate::counter::commit_queue::{self, Line, Place, Reader};
use crate::counter::missing::{ensure_unique_index, made_before_first_use, refuse_if_numbered};
use crate::counter::reserved::{Gapless, Origin, ReservedId};
use crate::counter::tickets;
use crate::counter::update::{first_of, increment, update};
use crate::counter::{Change, Counter};
use crate::fields::scope::Scope;
use crate::schema::sequence::{Sequence, Strategy};
use crate::state::allocator::Tally;

/// `count` ids of the gapless `counter`, in the transaction running in `session`
/// ([`ErrorKind::TransactionRequired`] without one), under `early` if it is the place at
/// this counter (see [`place_before_reading`]).
pub(crate) async fn take(
    db: &Database,
    counter: Counter<'_>,
    count: u64,
    tally: &Tally,
    session: &mut Session<'_>,
    early: Option<Box<(Scope, Place)>>,
) -> Result<Vec<i64>, Error> {
    let Counter { seq, scope } = counter;
    if !session.in_transaction() {
        return Err(Error::new(
            seq,
            ErrorKind::TransactionRequired {
                has_session: session.join().is_some(),
            },
        ));
    }
    // The process's other transactions on this counter go first, each until it has
    // committed, whatever handle or bare database they came through (see
    // `crate::counter::commit_queue`).
    let place = match (early, session.join()) {
        (Some(early), _) if early.0 == *scope => Some(early.1),
        // Another scope's (the document's changed since): given up before this one.
        (early, Some(session)) => {
            drop(early);
            let lsid = session.id().clone();
            Some(self::place(db, counter, &lsid).await)
        }
        (_, None) => None,
    };
    // The counter's `$inc`, inside the caller's transaction, whose rollback takes the ids back.
    let increment = increment(counter, count)?;
    let counters = db.collection::<BsonDocument>(counter.seq.counters);
    let unchecked = !tally.counter_checked.load(Ordering::Relaxed);
    // The counter read first, in the transaction, if nothing of this call has been
    // answered in it: the transaction has then surely begun, as the driver sees it, before
    // the `$inc` locks the counter, so that a caller cancelled during the `$inc` leaves a
    // transaction the driver aborts, not one that holds the counter for a minute against
    // every writer of the sequence (see `Session::answered`). A read locks nothing; it
    // comes after a counter made outside the transaction, which its snapshot then holds
    // (unless the caller's own commands took the snapshot before).
    //
    // Once this call has read in the transaction (`find_or_insert`'s lookup, the draft
    // `number_draft` numbers), its snapshot is taken, and a counter made outside it now
    // would be out of its sight: a counter not checked yet is looked for in it instead.
    let in_snapshot = if !session.answered() {
        made_before_first_use(db, &counters, counter, Change::Inc(increment), tally).await?;
        let found = read_in_transaction(&counters, counter, session).await?;
        session.mark_answered();
        found.is_some()
    } else if unchecked && !counter.upsert_starts_right() {
        read_in_transaction(&counters, counter, session)
            .await?
            .is_some()
    } else {
        true
    };
    // A counter that must be made before its first `$inc` (one the upsert would not start
    // right, or found by fields), missing from the snapshot: made in the transaction, so
    // that its `$inc` finds it, and gone with it if it aborts. One made by another writer
    // since the snapshot (this call's own included, made above after the caller's reads)
    // is a write conflict: the transaction aborts with a `TransientTransactionError`, and
    // its next run sees the counter.
    let made_here = !in_snapshot && !counter.upsert_starts_right();
    if made_here {
        made_in_transaction(db, &counters, counter, session).await?;
    } else if in_snapshot && unchecked && !counter.upsert_starts_right() {
        tally.counter_checked.store(true, Ordering::Relaxed);
    }
    tally.reservations.fetch_add(1, Ordering::Relaxed);
    let value = update(db, counter, Change::Inc(increment), tally, session.join()).await?;
    if made_here {
        // Made in a transaction that may yet abort: the next call looks again.
        tally.counter_checked.store(false, Ordering::Relaxed);
    }
    tally.ids.fetch_add(count, Ordering::Relaxed);
    let first = first_of(counter, value, count)?;
    let step = seq.layout.step;
    let ids: Vec<i64> = (0..count as i64).map(|i| first + i * step).collect();
    if let (Some(place), Some(&last)) = (place, ids.last()) {
        place.took(last);
    }
    Ok(ids)
}

/// The place of the transaction of the session `lsid` at `counter`, once the process's
/// transactions before it on that counter have committed.
async fn place(db: &Database, counter: Counter<'_>, lsid: &BsonDocument) -> Place {
    let queue = commit_queue::queue(line(db, counter));
    queue.place(lsid, reader(db, counter)).await
}

/// What names `counter` in `db` without a client: its commit queue's and its tickets' key.
fn line(db: &Database, counter: Counter<'_>) -> Line {
    Line::of(db.name(), counter.seq.counters, &counter.filter())
}

/// Reads `counter` in `db` outside any transaction, for the commit queue: what a hold
/// leaves for the transactions behind it. It owns what it reads with, since they may be
/// of another deployment with the same names, and its read runs to its end if the one
/// waiting gives it up ([`Finishing`]).
fn reader(db: &Database, counter: Counter<'_>) -> Reader {
    let (db, seq, scope) = (db.clone(), counter.seq, counter.scope.clone());
    Arc::new(move || {
        let (db, scope) = (db.clone(), scope.clone());
        Box::pin(Finishing::new(async move {
            let counter = Counter { seq, scope: &scope };
            admin::read(&db, counter).await.ok().flatten()
        }))
    })
}

/// For a gapless call that reads in the caller's transaction before it takes its id
/// (`number_draft`'s draft, `find_or_insert`'s key): its place at `counter`, taken before
/// that first read, for the id. A transaction's first read fixes its snapshot: taken after
/// it, a place that waited for another transaction's commit would still meet that commit's
/// `$inc` as a write conflict, and run again (16 drafts issued at once: 160 runs again).
/// None outside a transaction, or without a session.
pub(crate) async fn place_before_reading(
    db: &Database,
    counter: Counter<'_>,
    session: &mut Session<'_>,
) -> Option<Place> {
    if !session.in_transaction() {
        return None;
    }
    let lsid = session.join()?.id().clone();
    Some(place(db, counter, &lsid).await)
}

/// The ids `ids`, just reserved from `counter` for documents built later, each with what
/// its insert checks: the scope and `origin` it was reserved at, and for a gapless id the
/// caller's transaction that took it (the counter refuses one without it) and its ticket,
/// with the line of its counter, whose ticket goes when the token is dropped unused
/// ([`tickets`]).
pub(crate) fn reserved_ids(
    db: &Database,
    counter: Counter<'_>,
    ids: &[i64],
    origin: Origin,
    session: &Session<'_>,
) -> Vec<(ReservedId, Option<Line>)> {
    let taken_in = session
        .transaction_session()
        .filter(|_| counter.seq.strategy == Strategy::Gapless);
    let reserved = |id, gapless| ReservedId {
        id,
        scope: counter.scope.clone(),
        origin: origin.clone(),
        gapless,
    };
    let Some(session) = taken_in else {
        return ids.iter().map(|&id| (reserved(id, None), None)).collect();
    };
    let line = line(db, counter);
    let tickets = tickets::issue(&line, ids);
    let gapless = |ticket| {
        let session = session.clone();
        Some(Box::new(Gapless { session, ticket }))
    };
    ids.iter()
        .zip(tickets)
        .map(|(&id, ticket)| (reserved(id, gapless(ticket)), Some(line.clone())))
        .collect()
}

/// `Ok` if the gapless id `reserved`, reserved in a transaction of the caller's session, is
/// still this transaction's. The driver keeps a transaction's number to itself, so two
/// things tell: no later reservation of this process has taken the id again (after the
/// reserving transaction aborted; [`tickets`]), and the counter of its scope,
/// read in this transaction, has handed it out (an aborted transaction took its `$inc`
/// back, so a later transaction sees the counter below the id). Another process that took
/// the id again meets the unique index on the field, which lets one document only store
/// it. A token whose transaction committed without it left a hole, which this one fills.
/// Not gapless: nothing to look at.
pub(crate) async fn still_reserved(
    db: &Database,
    seq: &'static Sequence,
    reserved: &ReservedId,
    session: &mut Session<'_>,
) -> Result<(), Error> {
    let Some(gapless) = &reserved.gapless else {
        return Ok(());
    };
    let id = reserved.id;
    let counter = Counter {
        seq,
        scope: &reserved.scope,
    };
    let refused = |reason: String| {
        Error::new(
            seq,
            ErrorKind::ReservedTransaction {
                id,
                reason: reason.into(),
            },
        )
    };
    if !tickets::take(&line(db, counter), id, gapless.ticket) {
        return Err(refused(format!(
            "a later reservation in this process took {id} again: the transaction that \
             reserved it aborted, and took it back"
        )));
    }
    let last = last_in_transaction(db, counter, session).await?;
    match last {
        Some(last) if last >= id => Ok(()),
        Some(last) => Err(refused(format!(
            "the counter, read in this insert's transaction, shows {last} as the last id \
             handed out: the transaction that reserved {id} aborted, and took it back"
        ))),
        None => Err(refused(
            "the counter, read in this insert's transaction, is not there: the transaction \
             that reserved it made it, aborted, and took it back"
                .to_owned(),
        )),
    }
}

/// The last id the counter of `counter` has handed out as the caller's transaction sees
/// it (`None`: its snapshot holds no counter, or one with no value): its own `$inc`s
/// included, those of transactions that committed before its snapshot too, an aborted
/// one's not. What tells whether a gapless id reserved before is still this
/// transaction's (`source::counted::still_reserved`).
pub(crate) async fn last_in_transaction(
    db: &Database,
    counter: Counter<'_>,
    session: &mut Session<'_>,
) -> Result<Option<i64>, Error> {
    let counters = db.collection::<BsonDocument>(counter.seq.counters);
    let found = read_in_transaction(&counters, counter, session).await?;
    session.mark_answered();
    last_in(
        counter,
        found.and_then(|c| c.get(counter.value_key()).cloned()),
    )
}

/// Reads the counter in the caller's transaction (see [`take`]): the
/// counter its snapshot holds, if any. A failure is the driver's error, labels and all,
/// as the `$inc`'s would be.
async fn read_in_transaction(
    counters: &mongodb::Collection<BsonDocument>,
    counter: Counter<'_>,
    session: &mut Session<'_>,
) -> Result<Option<BsonDocument>, Error> {
    let seq = counter.seq;
    let found = counters
        .find_one(counter.filter())
        .projection(doc! { counter.value_key(): 1 })
        .optional(session.join(), |a, s| a.session(s))
        .await;
    let name = seq.counters;
    let what = || format!("reading the counter in `{name}` in the caller's transaction");
    found.doing(seq, what)
}

/// Makes the counter in the caller's transaction, whose snapshot has none (see
/// [`take`]), at the value before `start`: refused, as outside, when
/// the collection holds numbers of the sequence without it; a counter found by fields
/// gets the tool's unique index first, outside (an index cannot be made inside).
async fn made_in_transaction(
    db: &Database,
    counters: &mongodb::Collection<BsonDocument>,
    counter: Counter<'_>,
    session: &mut Session<'_>,
) -> Result<(), Error> {
    let seq = counter.seq;
    refuse_if_numbered(db, counter).await?;
    if !counter.layout().by_id() {
        ensure_unique_index(counters, counter).await?;
    }
    let value = counter.before_start()?;
    let insert = counters.insert_one(counter.created(value));
    let inserted = insert.optional(session.join(), |a, s| a.session(s)).await;
    inserted.map(drop).doing(seq, || {
        format!(
            "creating the counter {{ {} }} in `{}` at {value} (start = {}) in the \
                 caller's transaction, whose snapshot has none",
            counter.shown(),
            seq.counters,
            seq.start
        )
    })
}
