//! The counter-backed strategies, `counters`, `block` and `gapless`, as an id source: ids
//! taken from the counter document, the tutorial's `{ _id: <sequence>, seq }` or another
//! tool's layout ([`crate::round_trip::counter`]), one per scope for a scoped sequence. `counters`
//! and `block` take them through an allocator
//! that shares round trips (and, for `block`, whole blocks) between the tasks of a
//! [`Sequences`](crate::Sequences) handle, outside any transaction; `gapless` takes them
//! inside the caller's transaction, one call at a time. A counter's id is handed out
//! once, so an id held by another document is a failure, never a retry; an id whose
//! document is known not to be stored goes back only to a handle's live block (`block`,
//! [`race_lost`], and the ids a cancelled caller never received), else it is a gap.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use mongodb::Database;
use mongodb::bson::Document as BsonDocument;

use crate::base::detach::Finishing;
use crate::base::error::{Error, ErrorKind};
use crate::base::session::Session;
use crate::fields::scope::Scope;
use crate::round_trip::counter::Counter;
use crate::round_trip::counter::admin;
use crate::round_trip::counter::transaction;
use crate::round_trip::counter::update::CounterReserver;
use crate::schema::sequence::{Sequence, Strategy};
use crate::state::allocator::{Allocated, Handed};
use crate::state::commit_queue::{self, Line, Place, Reader};
use crate::state::context::Context;
use crate::state::registry::Route;
use crate::state::reserved::ReservedId;
use crate::state::tickets;

/// One id from the counter of `scope`.
pub(crate) async fn take_one(scope: &Scope, cx: &mut Context<'_>) -> Result<i64, Error> {
    let (route, seq) = (cx.route, cx.seq);
    match seq.strategy {
        // Boxed, as every path but the live block's (see `crate::insert`).
        Strategy::Gapless => Ok(Box::pin(take(scope, 1, cx)).await?[0]),
        _ => {
            let reserver = || reserver(route, Counter { seq, scope });
            let allocated = route.counter(seq, scope).allocate_one(reserver).await?;
            Ok(spent(allocated, cx))
        }
    }
}

/// `count` ids from the counter of `scope`, increasing, with no document: a number on its
/// own and an id reserved for a document built later. One id as an insert takes it; more
/// with one reservation: in the caller's transaction (gapless), else through the
/// allocator, given back to it if the caller goes away before they are handed out.
pub(crate) async fn take_n(
    scope: &Scope,
    count: u64,
    cx: &mut Context<'_>,
) -> Result<Vec<i64>, Error> {
    if count == 1 {
        return Ok(vec![take_one(scope, cx).await?]);
    }
    match cx.seq.strategy {
        Strategy::Gapless => take(scope, count, cx).await,
        _ => {
            let counter = Counter { seq: cx.seq, scope };
            let allocated = take_outside(cx.route, counter, count).await?;
            Ok(spent(allocated, cx).take())
        }
    }
}

/// Records gapless `ids`, just reserved from the counter of `scope` in the caller's
/// transaction for documents built later, as this reservation's: the line of their
/// counter, and a ticket for each (`state::tickets`).
pub(crate) fn issue_tickets(
    route: Route<'_>,
    seq: &'static Sequence,
    scope: &Scope,
    ids: &[i64],
) -> (Line, Vec<u64>) {
    let line = line(route, Counter { seq, scope });
    let tickets = tickets::issue(&line, ids);
    (line, tickets)
}

/// `Ok` if the gapless id `reserved`, reserved in a transaction of the caller's session, is
/// still this transaction's. The driver keeps a transaction's number to itself, so two
/// things tell: no later reservation of this process has taken the id again (after the
/// reserving transaction aborted; `state::tickets`), and the counter of its scope,
/// read in this transaction, has handed it out (an aborted transaction took its `$inc`
/// back, so a later transaction sees the counter below the id). Another process that took
/// the id again meets the unique index on the field, which lets one document only store
/// it. A token whose transaction committed without it left a hole, which this one fills.
/// Not gapless: nothing to look at.
pub(crate) async fn still_reserved(
    reserved: &ReservedId,
    cx: &mut Context<'_>,
) -> Result<(), Error> {
    let Some(gapless) = &reserved.gapless else {
        return Ok(());
    };
    let (id, seq) = (reserved.id, cx.seq);
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
    if !tickets::take(&line(cx.route, counter), id, gapless.ticket) {
        return Err(refused(format!(
            "a later reservation in this process took {id} again: the transaction that \
             reserved it aborted, and took it back"
        )));
    }
    let last = transaction::last_in_transaction(cx.route.db, counter, &mut cx.session).await?;
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

/// Ids for each group of documents, `(scope, positions)`: one reservation per scope, each
/// group's ids or why it has none. `Err` when nothing more can be reserved in this call:
/// a gapless reservation failed, which aborts the caller's transaction. Each group's ids
/// go back to their allocator if they are dropped before [`Handed::take`] (a document
/// with several sequences holds them so until it has every sequence's).
pub(crate) async fn take_groups(
    groups: &[(Scope, Vec<usize>)],
    cx: &mut Context<'_>,
) -> Result<Vec<Result<Handed, Error>>, Error> {
    let (route, seq) = (cx.route, cx.seq);
    let mut reserved = Vec::with_capacity(groups.len());
    // Gapless reservations run in the caller's transaction, whose session serves one
    // command at a time; the others run together.
    if seq.strategy == Strategy::Gapless {
        for (scope, positions) in groups {
            let count = positions.len() as u64;
            reserved.push(Ok(Handed::kept(take(scope, count, cx).await?)));
        }
        return Ok(reserved);
    }
    let takes = groups.iter().map(|(scope, positions)| {
        take_outside(route, Counter { seq, scope }, positions.len() as u64)
    });
    for taken in futures_util::future::join_all(takes).await {
        reserved.push(taken.map(|allocated| spent(allocated, cx)));
    }
    Ok(reserved)
}

/// The ids of `allocated`, its reservation round trip, if it waited for one, counted in
/// `cx`.
fn spent<T>(allocated: Allocated<T>, cx: &mut Context<'_>) -> T {
    cx.reservations += u32::from(allocated.waited);
    allocated.ids
}

/// `count` ids of the gapless sequence from the counter of `scope`, inside the caller's
/// transaction, so that a rollback takes them back: it needs a transaction. (`counters`
/// and `block` take theirs outside it, [`take_outside`], so that concurrent transactions
/// never conflict on the counter and a rollback costs a gap, never an id handed out
/// twice.)
async fn take(scope: &Scope, count: u64, cx: &mut Context<'_>) -> Result<Vec<i64>, Error> {
    let (route, counter) = (cx.route, Counter { seq: cx.seq, scope });
    let early = cx.early_place.take();
    let ids = take_in_transaction(route, counter, count, &mut cx.session, early).await?;
    cx.reservations += 1;
    Ok(ids)
}

/// For a gapless call that reads in the caller's transaction before it takes its id
/// (`number_draft`'s draft, `find_or_insert`'s key): the turn at the counter of `scope`,
/// taken before that first read, and kept in `cx` for the id. A transaction's first read
/// fixes its snapshot: taken after it, a turn that waited for another transaction's
/// commit would still meet that commit's `$inc` as a write conflict, and run again (16
/// drafts issued at once: 160 runs again). Nothing outside a transaction, for another
/// strategy, or without a session.
pub(crate) async fn place_before_reading(scope: &Scope, cx: &mut Context<'_>) {
    let (route, seq) = (cx.route, cx.seq);
    if seq.strategy != Strategy::Gapless || !cx.session.in_transaction() {
        return;
    }
    if let Some(session) = cx.session.join() {
        let lsid = session.id().clone();
        let place = place(route, Counter { seq, scope }, &lsid).await;
        cx.early_place = Some(Box::new((scope.clone(), place)));
    }
}

/// `count` ids of the gapless `counter`, in the transaction running in `session`
/// ([`ErrorKind::TransactionRequired`] without one), under `early` if it is the turn of this
/// counter (see [`place_before_reading`]).
pub(crate) async fn take_in_transaction(
    route: Route<'_>,
    counter: Counter<'_>,
    count: u64,
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
    let allocator = route.counter(seq, scope);
    // The process's other transactions on this counter go first, each until it has
    // committed, whatever handle or bare database they came through (see
    // `crate::state::commit_queue`).
    let place = match (early, session.join()) {
        (Some(early), _) if early.0 == *scope => Some(early.1),
        // Another scope's (the document's changed since): given up before this one.
        (early, Some(session)) => {
            drop(early);
            let lsid = session.id().clone();
            Some(self::place(route, counter, &lsid).await)
        }
        (_, None) => None,
    };
    let first =
        transaction::reserve_in_transaction(route.db, counter, count, &allocator.tally, session)
            .await?;
    let step = seq.layout.step;
    let ids: Vec<i64> = (0..count as i64).map(|i| first + i * step).collect();
    if let (Some(place), Some(&last)) = (place, ids.last()) {
        place.took(last);
    }
    Ok(ids)
}

/// The place of the transaction of the session `lsid` at `counter`, once the process's
/// transactions before it on that counter have committed.
async fn place(route: Route<'_>, counter: Counter<'_>, lsid: &BsonDocument) -> Place {
    let queue = commit_queue::queue(line(route, counter));
    queue.place(lsid, reader(route.db, counter)).await
}

/// What names `counter` in `route`'s database without a client: its commit queue's and
/// its reservations' key.
fn line(route: Route<'_>, counter: Counter<'_>) -> Line {
    Line::of(route.db.name(), counter.seq.counters, &counter.filter())
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

/// `count` ids through the allocator of `counter` (counters and block), for a call of
/// `route` (taken by several scopes' reservations at once), given back if dropped before
/// they are taken.
pub(crate) async fn take_outside(
    route: Route<'_>,
    counter: Counter<'_>,
    count: u64,
) -> Result<Allocated<Handed>, Error> {
    let reserver = || reserver(route, counter);
    let allocator = route.counter(counter.seq, counter.scope);
    allocator.allocate_handed(count, reserver).await
}

/// `counter`, as the allocators reserve from it.
fn reserver(route: Route<'_>, counter: Counter<'_>) -> CounterReserver {
    let (db, seq, scope) = (route.db.clone(), counter.seq, counter.scope.clone());
    CounterReserver { db, seq, scope }
}

/// Raises the counter of `scope` to the largest numeric id stored in it, and returns its
/// value. This process's live block of the scope is dropped: the ids left in it may be
/// among those stored.
pub(crate) async fn sync(
    route: Route<'_>,
    seq: &'static Sequence,
    scope: &Scope,
) -> Result<i64, Error> {
    let allocator = route.counter(seq, scope);
    let value = admin::sync(route.db, Counter { seq, scope }, &allocator.tally).await?;
    allocator.discard();
    Ok(value)
}

/// Raises the counter of `scope` to `largest`, an id stored in it, and drops this
/// process's live block of the scope, as [`sync`] does.
pub(crate) async fn raise(
    route: Route<'_>,
    seq: &'static Sequence,
    scope: &Scope,
    largest: i64,
) -> Result<i64, Error> {
    let allocator = route.counter(seq, scope);
    let value = admin::raise(route.db, Counter { seq, scope }, largest, &allocator.tally).await?;
    allocator.discard();
    Ok(value)
}

/// Sets the counter of `scope` to `last`, and drops this process's live block of the
/// scope: it was reserved under the old value.
pub(crate) async fn set(
    route: Route<'_>,
    seq: &'static Sequence,
    scope: &Scope,
    last: i64,
) -> Result<(), Error> {
    admin::set(route.db, Counter { seq, scope }, last).await?;
    if let Some(registry) = route.registry {
        registry.counter(route.db.name(), seq, scope).discard();
    }
    Ok(())
}

/// [`crate::source::race_lost`] for a counter's id: counted, and given back to the handle's
/// live block with the block strategy, when `unwritten`; a gap otherwise.
pub(crate) fn race_lost(cx: &Context<'_>, scope: &Scope, id: i64, unwritten: bool) {
    let (route, seq) = (cx.route, cx.seq);
    let allocator = route.counter(seq, scope);
    allocator.tally.races_lost.fetch_add(1, Ordering::Relaxed);
    let pooled = matches!(seq.strategy, Strategy::Block { .. }) && route.registry.is_some();
    if unwritten && pooled {
        allocator.give_back(&[id]);
    }
    tracing::debug!(
        sequence = seq.name,
        id,
        given_back = unwritten && pooled,
        "another caller stored the key, or numbered the draft, first"
    );
}
