//! The counter-backed strategies, `counters`, `block` and `gapless`: ids taken from the
//! counter document `{ _id: <sequence>, seq }` ([`counter`]). `counters` and `block` take
//! them through an allocator that shares round trips (and, for `block`, whole blocks)
//! between the tasks of a [`Sequences`](crate::Sequences) handle, outside any
//! transaction; `gapless` takes them inside the caller's transaction, one call at a time.
//! A counter's id is handed out once, so an id held by another document is a failure,
//! never a retry.

pub(crate) mod counter;

use mongodb::Collection;

use crate::bulk::Batch;
use crate::fields::{fill, unset};
use crate::insert::conclude;
use crate::sequences::Route;
use crate::session::Session;
use crate::write::{self, Sending};
use crate::{Document, Error, IdValue, Sequence, Strategy};
use counter::CounterSource;

/// Takes an id from the counter and inserts `doc` with it.
pub(crate) async fn insert_one<T: Document>(
    doc: &mut T,
    route: Route<'_>,
    seq: &Sequence,
    collection: &Collection<T>,
    session: &mut Session<'_>,
) -> Result<IdValue<T>, Error> {
    let id = take(route, seq, 1, session).await?[0];
    let value = fill(seq, doc, id)?;
    let fate = write::insert_one(collection, doc, id, Sending::First, session).await;
    conclude(seq, doc, id, value, fate)
}

/// Takes ids for every document waiting in `batch` with one reservation, and writes them.
pub(crate) async fn insert_many<T: Document>(
    docs: &mut [T],
    route: Route<'_>,
    seq: &Sequence,
    collection: &Collection<T>,
    mut batch: Batch<IdValue<T>>,
    session: &mut Session<'_>,
) -> Result<Vec<IdValue<T>>, Error> {
    let waiting = batch.waiting();
    let ids = match take(route, seq, waiting.len() as u64, session).await {
        Ok(ids) => ids,
        Err(error) => return batch.abandon(seq, error),
    };
    let taken = match batch
        .fill_and_write(seq, collection, docs, &waiting, &ids, session)
        .await
    {
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

/// `count` ids, increasing. `counters` and `block` take them outside the caller's
/// transaction, so that concurrent transactions never conflict on the counter and a
/// rollback costs a gap, never an id handed out twice. `gapless` takes them inside it, so
/// that a rollback takes them back: it needs a transaction.
async fn take(
    route: Route<'_>,
    seq: &Sequence,
    count: u64,
    session: &mut Session<'_>,
) -> Result<Vec<i64>, Error> {
    let allocator = route.counter(seq);
    if seq.strategy != Strategy::Gapless {
        let source = CounterSource {
            db: route.db,
            sequence: seq,
        };
        return allocator.allocate(count, &source).await;
    }
    if !session.in_transaction() {
        return Err(Error::TransactionRequired {
            sequence: seq.name.to_owned(),
            has_session: session.join().is_some(),
        });
    }
    let first =
        counter::reserve_in_transaction(route.db, seq, count, &allocator.tally, session).await?;
    Ok((0..count as i64).map(|i| first + i).collect())
}

/// Raises the counter to the largest numeric `_id` stored, and returns its value.
pub(crate) async fn sync(route: Route<'_>, seq: &Sequence) -> Result<i64, Error> {
    counter::sync(route.db, seq, &route.counter(seq).tally).await
}
