//! The counter-backed strategies, `counters` and `block`: ids taken from the counter
//! document `{ _id: <sequence>, seq }` ([`counter`]), through an allocator that shares
//! round trips (and, for `block`, whole blocks) between the tasks of a
//! [`Sequences`](crate::Sequences) handle. A counter's id is handed out once, so an id
//! held by another document is a failure, never a retry.

pub(crate) mod counter;

use mongodb::Collection;

use crate::bulk::Batch;
use crate::fields::{fill, fill_positions, unset};
use crate::insert::conclude;
use crate::sequences::Route;
use crate::write;
use crate::{Document, Error, IdValue, Sequence};
use counter::CounterSource;

/// Takes an id from the counter and inserts `doc` with it.
pub(crate) async fn insert_one<T: Document>(
    doc: &mut T,
    route: Route<'_>,
    seq: &Sequence,
    collection: &Collection<T>,
) -> Result<IdValue<T>, Error> {
    let source = CounterSource {
        db: route.db,
        sequence: seq,
    };
    let id = route.counter(seq).allocate(1, &source).await?[0];
    let value = fill(seq, doc, id)?;
    let fate = write::insert_one(collection, doc, id).await;
    conclude(seq, doc, id, value, fate)
}

/// Takes ids for every document waiting in `batch` with one reservation, and writes them.
pub(crate) async fn insert_many<T: Document>(
    docs: &mut [T],
    route: Route<'_>,
    seq: &Sequence,
    collection: &Collection<T>,
    mut batch: Batch<IdValue<T>>,
) -> Result<Vec<IdValue<T>>, Error> {
    let waiting = batch.waiting();
    let source = CounterSource {
        db: route.db,
        sequence: seq,
    };
    let allocator = route.counter(seq);
    let ids = match allocator.allocate(waiting.len() as u64, &source).await {
        Ok(ids) => ids,
        Err(error) => return batch.abandon(seq, error),
    };
    let values = match fill_positions(seq, docs, &waiting, &ids) {
        Ok(values) => values,
        Err(error) => return batch.abandon(seq, error),
    };
    let taken = batch.write(collection, docs, &waiting, &ids, &values).await;
    // A counter's id held by another document was written by other means (see
    // `sync_counter`): a failure, not a retry.
    for taken in taken {
        unset(&mut docs[taken.position]);
        batch.fail(taken.position, taken.rejection);
    }
    batch.conclude(seq)
}

/// Raises the counter to the largest numeric `_id` stored, and returns its value.
pub(crate) async fn sync(route: Route<'_>, seq: &Sequence) -> Result<i64, Error> {
    counter::sync(route.db, seq, &route.counter(seq).tally).await
}
