//! The missing-counter safety net: a counter made before its first `$inc` where the upsert
//! would not start it right (or, found by fields, never upserts), after the tool's unique
//! index, and never while the collection holds numbers of the sequence without it.

use mongodb::Database;
use mongodb::action::Action;
use mongodb::bson::Document as BsonDocument;

use super::Change;
use super::{Counter, counter_write_concern, stored};
use crate::base::error::{Doing, Error, ErrorKind};
use crate::base::server::{DUPLICATE_KEY, server_code, unique_index};
use crate::optimistic::largest;
use crate::state::allocator::Tally;

/// An index of the same keys exists under another name, or with other options: the
/// counter's fields are indexed already (by the tool, or by a server that names indexes
/// itself).
const INDEX_OPTIONS_CONFLICT: i32 = 85;

const INDEX_KEY_SPECS_CONFLICT: i32 = 86;

/// Makes the counter at [`Counter::before_start`] if it does not exist, so that the first
/// id handed out is `start`: a counter found by `_id` whose upsert would not start there,
/// or one found by fields (whose updates do not upsert). A counter that exists, made by
/// seqid or by another tool, is left as it is; so is one that another writer makes first
/// (E11000). Before an id is taken (`$inc`), a counter is made only if no number of the
/// sequence is stored without it ([`refuse_if_numbered`]); `$max` (`sync_counter`) makes
/// it regardless, to start above them.
pub(super) async fn make_if_missing(
    db: &Database,
    counters: &mongodb::Collection<BsonDocument>,
    counter: Counter<'_>,
    change: Change,
) -> Result<(), Error> {
    if stored(counters, counter).await?.is_some() {
        return Ok(());
    }
    if let Change::Inc(_) = change {
        refuse_if_numbered(db, counter).await?;
    }
    match counter.layout().by_id() {
        true => insert_counter(counters, counter, counter.before_start()?).await,
        false => create(counters, counter, counter.before_start()?).await,
    }
}

/// The safety net of a counter about to be made: refuses ([`ErrorKind::CounterMissing`]) when
/// the sequence's collection already holds a number of the sequence in the counter's
/// scope: at or above `start`, and with a step one of `start + k × step` (two sequences
/// with a step may share a field, odd and even). A new counter would hand those numbers
/// out again; far more often than not the counter exists under another name (a wrong
/// guess of another tool's default, a renamed sequence). One query for the largest such
/// number, on a counter's first use only.
///
/// A number found is checked against the counter once more: a writer that made the
/// counter and stored its first number between this caller's look for the counter and
/// this query (a concurrent first use) made the counter before the number, so the
/// counter is there by now.
///
/// A sequence named at run time with no collection (a number on its own) numbers no
/// documents seqid could look in: nothing to check.
pub(super) async fn refuse_if_numbered(db: &Database, counter: Counter<'_>) -> Result<(), Error> {
    let seq = counter.seq;
    if seq.collection.is_empty() {
        return Ok(());
    }
    let collection = db.collection::<BsonDocument>(seq.collection);
    let Some(largest) = largest::of_sequence(&collection, seq, counter.scope).await? else {
        return Ok(());
    };
    let counters = db.collection::<BsonDocument>(seq.counters);
    if stored(&counters, counter).await?.is_some() {
        return Ok(());
    }
    Err(Error::new(
        seq,
        ErrorKind::CounterMissing {
            counter: counter.shown(),
            scope: counter.scope.to_string().into(),
            largest: Box::new(largest),
        },
    ))
}

/// Creates the counter found by fields at `value`: the tool's unique index on those
/// fields first, so that two writers creating it at once make one counter (the second
/// insert meets the index, E11000, and leaves the first's).
pub(super) async fn create(
    counters: &mongodb::Collection<BsonDocument>,
    counter: Counter<'_>,
    value: i64,
) -> Result<(), Error> {
    ensure_unique_index(counters, counter).await?;
    insert_counter(counters, counter, value).await
}

/// Inserts the counter at `value`, with the counter's write concern; one that exists
/// (E11000) is left as it is.
async fn insert_counter(
    counters: &mongodb::Collection<BsonDocument>,
    counter: Counter<'_>,
    value: i64,
) -> Result<(), Error> {
    let seq = counter.seq;
    let insert = counters.insert_one(counter.created(value));
    let concern = counter_write_concern(seq, counters);
    match insert.optional(concern, |a, c| a.write_concern(c)).await {
        Err(error) if server_code(&error) == Some(DUPLICATE_KEY) => Ok(()),
        inserted => inserted.map(drop).doing(seq, || {
            format!(
                "creating the counter {{ {} }} in `{}` at {value} (start = {})",
                counter.shown(),
                seq.counters,
                seq.start
            )
        }),
    }
}

/// The unique index that makes a counter found by fields one document: the tool's own
/// (same keys, same name), so that the tool, making its index, finds it made. One of the
/// same keys under another name counts as made.
pub(super) async fn ensure_unique_index(
    counters: &mongodb::Collection<BsonDocument>,
    counter: Counter<'_>,
) -> Result<(), Error> {
    let (seq, layout) = (counter.seq, counter.layout());
    let (keys, name) = crate::base::server::counter_index(layout);
    let made = counters.create_index(unique_index(keys, &name)).await;
    let code = made.as_ref().err().and_then(server_code);
    if let Some(INDEX_OPTIONS_CONFLICT | INDEX_KEY_SPECS_CONFLICT) = code {
        return Ok(());
    }
    made.map(drop).doing(seq, || {
        format!(
            "making the unique index `{name}` that keeps one counter per sequence in `{}` ({})",
            seq.counters, layout.tool
        )
    })
}

/// A counter an upsert would not start right (or, found by fields, never upserts) is
/// made, if missing, before its first update through this allocator: outside any
/// transaction, which could not make the tool's unique index.
pub(super) async fn made_before_first_use(
    db: &Database,
    counters: &mongodb::Collection<BsonDocument>,
    counter: Counter<'_>,
    change: Change,
    tally: &Tally,
) -> Result<(), Error> {
    use std::sync::atomic::Ordering;
    if !tally.counter_checked.load(Ordering::Relaxed) && !counter.upsert_starts_right() {
        make_if_missing(db, counters, counter, change).await?;
        tally.counter_checked.store(true, Ordering::Relaxed);
    }
    Ok(())
}
