//! The counter-backed strategies, `counters`, `block` and `gapless`, as an id source: ids
//! taken from the counter document, the tutorial's `{ _id: <sequence>, seq }` or another
//! tool's layout ([`crate::counter`]), one per scope for a scoped sequence. `counters`
//! and `block` take them through an allocator
//! that shares round trips (and, for `block`, whole blocks) between the tasks of a
//! [`Sequences`](crate::Sequences) handle, outside any transaction; `gapless` takes them
//! inside the caller's transaction, one call at a time ([`crate::counter::gapless`], which
//! this source calls with the call's database, session and early place). A counter's id is handed out
//! once, so an id held by another document is a failure, never a retry; an id whose
//! document is known not to be stored goes back only to a handle's live block (`block`,
//! [`race_lost`], and the ids a cancelled caller never received), else it is a gap.

use std::sync::atomic::Ordering;

use crate::base::error::Error;
use crate::call::context::Context;
use crate::call::registry::Route;
use crate::counter::Counter;
use crate::counter::admin;
use crate::counter::gapless;
use crate::counter::reserved::ReservedId;
use crate::counter::update::CounterReserver;
use crate::fields::scope::Scope;
use crate::schema::sequence::{Sequence, Strategy};
use crate::state::allocator::{Allocated, Handed};

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
    let (db, counter) = (cx.route.db, Counter { seq: cx.seq, scope });
    let allocator = cx.route.counter(cx.seq, scope);
    let early = cx.early_place.take();
    let ids = gapless::take(db, counter, count, &allocator.tally, &mut cx.session, early).await?;
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
    if cx.seq.strategy != Strategy::Gapless {
        return;
    }
    let counter = Counter { seq: cx.seq, scope };
    let place = gapless::place_before_reading(cx.route.db, counter, &mut cx.session).await;
    cx.early_place = place.map(|place| Box::new((scope.clone(), place)));
}

/// `Ok` if the id `reserved` is still its reservation's: a gapless id's transaction's
/// (see [`gapless::still_reserved`]); any other, always.
pub(crate) async fn still_reserved(
    reserved: &ReservedId,
    cx: &mut Context<'_>,
) -> Result<(), Error> {
    gapless::still_reserved(cx.route.db, cx.seq, reserved, &mut cx.session).await
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
