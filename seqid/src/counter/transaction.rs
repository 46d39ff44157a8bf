//! The gapless strategy's protocol inside the caller's transaction: the counter read in
//! the transaction first, made in it if its snapshot has none, then advanced in it.

use mongodb::Database;
use mongodb::action::Action;
use mongodb::bson::{Document as BsonDocument, doc};

use super::Change;
use super::Counter;
use super::admin::last_in;
use super::missing::{ensure_unique_index, made_before_first_use, refuse_if_numbered};
use super::update::{first_of, increment, update};
use crate::base::error::{Doing, Error};
use crate::base::session::Session;
use crate::state::allocator::Tally;

/// Reserves `amount` ids inside the caller's transaction (the gapless strategy), and
/// returns the first (the others follow it, `step` apart): the transaction's rollback
/// takes them back.
pub(crate) async fn reserve_in_transaction(
    db: &Database,
    counter: Counter<'_>,
    amount: u64,
    tally: &Tally,
    session: &mut Session<'_>,
) -> Result<i64, Error> {
    use std::sync::atomic::Ordering;
    let increment = increment(counter, amount)?;
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
    tally.ids.fetch_add(amount, Ordering::Relaxed);
    first_of(counter, value, amount)
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

/// Reads the counter in the caller's transaction (see [`reserve_in_transaction`]): the
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
/// [`reserve_in_transaction`]), at the value before `start`: refused, as outside, when
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
