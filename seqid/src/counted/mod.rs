//! The counter-backed strategies, `counters`, `block` and `gapless`: ids taken from the
//! counter document `{ _id: <sequence>, seq }` ([`counter`]), one per scope for a scoped
//! sequence. `counters` and `block` take them through an allocator that shares round
//! trips (and, for `block`, whole blocks) between the tasks of a
//! [`Sequences`](crate::Sequences) handle, outside any transaction; `gapless` takes them
//! inside the caller's transaction, one call at a time. A counter's id is handed out
//! once, so an id held by another document is a failure, never a retry.

pub(crate) mod counter;

use crate::allocator::Allocated;
use crate::bulk::Batch;
use crate::context::Context;
use crate::fields::{fill, unset};
use crate::insert::conclude;
use crate::scope::{Scope, grouped};
use crate::sequences::Route;
use crate::write::{self, Key, Rejection};
use crate::{Document, Error, IdValue, Sequence, Strategy};
use counter::{Counter, CounterSource};

/// Takes an id from the counter of `scope` and inserts `doc` with it.
pub(crate) async fn insert_one<T: Document>(
    doc: &mut T,
    scope: Scope,
    cx: &mut Context<'_>,
) -> Result<IdValue<T>, Error> {
    let (route, seq) = (cx.route, cx.seq);
    let id = match seq.strategy {
        // Boxed, as every path but the live block's (see `crate::insert`).
        Strategy::Gapless => Box::pin(take(&scope, 1, cx)).await?[0],
        _ => {
            let source = || source(route, seq, &scope);
            let allocated = route.counter(seq, &scope).allocate_one(source).await?;
            cx.reservations += u32::from(allocated.waited);
            allocated.ids
        }
    };
    let value = fill(seq, doc, id)?;
    let key = Key { scope, id };
    let fate = write::insert_one(doc, &key, cx.first(), (), cx).await;
    conclude(seq, doc, id, value, fate)
}

/// Takes ids for every document waiting in `batch` with one reservation per scope, and
/// writes them with one `insert_many`.
pub(crate) async fn insert_many<T: Document>(
    docs: &mut [T],
    scopes: &[Scope],
    mut batch: Batch<IdValue<T>>,
    cx: &mut Context<'_>,
) -> Result<Vec<IdValue<T>>, Error> {
    let (route, seq) = (cx.route, cx.seq);
    let waiting = batch.waiting();
    let groups = grouped(waiting.iter().map(|&p| (scopes[p].clone(), p)));
    // One reservation per scope. Gapless ones run in the caller's transaction, whose
    // session serves one command at a time; the others run together.
    let mut reserved = Vec::with_capacity(groups.len());
    if seq.strategy == Strategy::Gapless {
        for (scope, positions) in &groups {
            // A failed update aborts the transaction: nothing more can be done in it.
            match take(scope, positions.len() as u64, cx).await {
                Ok(ids) => reserved.push(Ok(ids)),
                Err(error) => return batch.abandon(seq, error),
            }
        }
    } else {
        let takes = groups
            .iter()
            .map(|(scope, positions)| take_outside(route, seq, scope, positions.len() as u64));
        for taken in futures_util::future::join_all(takes).await {
            reserved.push(taken.map(|allocated| {
                cx.reservations += u32::from(allocated.waited);
                allocated.ids
            }));
        }
    }
    // No id for any scope: the error itself, as for an unscoped sequence.
    if reserved.iter().all(Result::is_err) {
        let error = reserved
            .swap_remove(0)
            .expect_err("every reservation failed");
        return batch.abandon(seq, error);
    }
    let mut positions = Vec::with_capacity(waiting.len());
    let mut keys = Vec::with_capacity(waiting.len());
    for ((scope, group), ids) in groups.into_iter().zip(reserved) {
        match ids {
            Ok(ids) => {
                for (position, id) in group.into_iter().zip(ids) {
                    positions.push(position);
                    keys.push(Key {
                        scope: scope.clone(),
                        id,
                    });
                }
            }
            // No id for this scope: its documents fail, the others go on.
            Err(error) => {
                let message = error.to_string();
                for position in group {
                    batch.fail(
                        position,
                        Rejection {
                            message: message.clone(),
                            ..Rejection::default()
                        },
                    );
                }
            }
        }
    }
    let taken = match batch.fill_and_write(docs, positions, keys, (), cx).await {
        Ok(taken) => taken,
        Err(error) => return batch.abandon(seq, error),
    };
    // A counter's id held by another document was written by other means (see
    // `sync_counter`): a failure, not a retry.
    for taken in taken {
        unset(&mut docs[taken.position]);
        batch.fail(taken.position, taken.rejection);
    }
    batch.conclude(seq)
}

/// `count` ids from the counter of `scope`, increasing. `counters` and `block` take them
/// outside the caller's transaction, so that concurrent transactions never conflict on
/// the counter and a rollback costs a gap, never an id handed out twice. `gapless` takes
/// them inside it, so that a rollback takes them back: it needs a transaction.
async fn take(scope: &Scope, count: u64, cx: &mut Context<'_>) -> Result<Vec<i64>, Error> {
    let (route, seq) = (cx.route, cx.seq);
    if seq.strategy != Strategy::Gapless {
        let allocated = take_outside(route, seq, scope, count).await?;
        cx.reservations += u32::from(allocated.waited);
        return Ok(allocated.ids);
    }
    if !cx.session.in_transaction() {
        return Err(Error::TransactionRequired {
            sequence: seq.name.to_owned(),
            has_session: cx.session.join().is_some(),
        });
    }
    let allocator = route.counter(seq, scope);
    let counter = Counter { seq, scope };
    let first = counter::reserve_in_transaction(
        route.db,
        counter,
        count,
        &allocator.tally,
        &mut cx.session,
    )
    .await?;
    cx.reservations += 1;
    Ok((0..count as i64).map(|i| first + i).collect())
}

/// `count` ids through the allocator of the counter of `scope` (counters and block), for
/// a call of `route` (taken by several scopes' reservations at once).
async fn take_outside(
    route: Route<'_>,
    seq: &Sequence,
    scope: &Scope,
    count: u64,
) -> Result<Allocated<Vec<i64>>, Error> {
    let allocator = route.counter(seq, scope);
    allocator
        .allocate(count, || source(route, seq, scope))
        .await
}

/// The counter of `scope`, as the allocators reserve from it.
fn source(route: Route<'_>, seq: &Sequence, scope: &Scope) -> CounterSource {
    CounterSource {
        db: route.db.clone(),
        seq: *seq,
        scope: scope.clone(),
    }
}

/// Raises the counter of `scope` to the largest numeric id stored in it, and returns its
/// value. This process's live block of the scope is dropped: the ids left in it may be
/// among those stored.
pub(crate) async fn sync(route: Route<'_>, seq: &Sequence, scope: &Scope) -> Result<i64, Error> {
    let allocator = route.counter(seq, scope);
    let value = counter::sync(route.db, Counter { seq, scope }, &allocator.tally).await?;
    allocator.discard();
    Ok(value)
}

/// Raises the counter of `scope` to `largest`, an id stored in it, and drops this
/// process's live block of the scope, as [`sync`] does.
pub(crate) async fn raise(
    route: Route<'_>,
    seq: &Sequence,
    scope: &Scope,
    largest: i64,
) -> Result<i64, Error> {
    let allocator = route.counter(seq, scope);
    let value = counter::raise(route.db, Counter { seq, scope }, largest, &allocator.tally).await?;
    allocator.discard();
    Ok(value)
}
