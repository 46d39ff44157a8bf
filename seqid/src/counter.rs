//! The counters document: `{ _id: <sequence>, seq: <last id handed out> }` (for a scope,
//! `_id` names the sequence and the scope's values: see [`scope`](crate::scope)), advanced with
//! one `findAndModify` + `$inc` (upsert), as in the MongoDB tutorial. Its filter lets the
//! `$inc` apply only to a counter that stays a whole number an id can come from, so a
//! counter holding 1.5 (or a string, or a Double at 2^53) is reported as it is, never moved.

use mongodb::bson::{Bson, Document as BsonDocument, doc};
use mongodb::options::{Acknowledgment, ReturnDocument, WriteConcern};
use mongodb::{ClientSession, Database};

use crate::allocator::{Source, Tally, interrupted};
use crate::backoff::backoff;
use crate::frontier::Ids;
use crate::largest;
use crate::scope::Scope;
use crate::server::{DUPLICATE_KEY, PRIMARY, server_code};
use crate::session::Session;
use crate::{CounterWriteConcern, Error, Sequence, numeric};

/// Upserts that race on a new counter fail with E11000; the manual says a retry cannot
/// fail again absent a delete, so a few attempts are plenty. The same bound holds for a
/// server that answers an upsert with no document.
const UPSERT_ATTEMPTS: u32 = 5;
const TYPE_MISMATCH: i32 = 14;
/// Updates conditional on the value read lose only to other writers taking ids, which
/// the backoff spreads out; a bound all the same, so no caller waits forever.
const CONTENDED_ATTEMPTS: u32 = 16;

/// One counter document: a sequence's, or the one of a scope of it.
#[derive(Clone, Copy)]
pub(crate) struct Counter<'a> {
    pub seq: &'static Sequence,
    pub scope: &'a Scope,
}

impl Counter<'_> {
    /// The counter document's `_id`.
    fn id(&self) -> Bson {
        self.scope.counter_id(self.seq)
    }

    /// The `_id`, for messages.
    fn shown(&self) -> Box<str> {
        self.id().to_string().into()
    }

    fn filter(&self) -> BsonDocument {
        doc! { "_id": self.id() }
    }

    /// `update`, and for a scope's counter the fields it is created with for people and
    /// other tools (`$setOnInsert`).
    fn creating(&self, mut update: BsonDocument) -> BsonDocument {
        if let Some(fields) = self.scope.counter_fields(self.seq) {
            update.insert("$setOnInsert", fields);
        }
        update
    }
}

/// Reserves ids by adding to the counter: `$inc: amount` returning `hi` owns
/// `hi - amount + 1 ..= hi` (pooled semantics, so plain `$inc: 1` writers never collide).
/// It owns what it needs: it runs in the allocator's flusher.
pub(crate) struct CounterSource {
    pub db: Database,
    pub seq: &'static Sequence,
    pub scope: Scope,
}

impl Source for CounterSource {
    async fn reserve(&self, amount: u64, tally: &Tally) -> Result<i64, Error> {
        let counter = Counter {
            seq: self.seq,
            scope: &self.scope,
        };
        let seq = counter.seq;
        let overflow = || Error::Overflow {
            sequence: seq,
            value: amount.into(),
            target: "i64",
            origin: "the number of ids reserved at once".into(),
        };
        let step = i64::try_from(amount).map_err(|_| overflow())?;
        let hi = update(&self.db, counter, Change::Inc(step), tally, None).await?;
        first_of(seq, hi, step)
    }

    fn interrupted(&self) -> Error {
        interrupted(self.seq, &self.scope)
    }
}

/// Reserves `amount` ids inside the caller's transaction (the gapless strategy), and
/// returns the first: the transaction's rollback takes them back.
pub(crate) async fn reserve_in_transaction(
    db: &Database,
    counter: Counter<'_>,
    amount: u64,
    tally: &Tally,
    session: &mut Session<'_>,
) -> Result<i64, Error> {
    let seq = counter.seq;
    let step = i64::try_from(amount).map_err(|_| Error::Overflow {
        sequence: seq,
        value: amount.into(),
        target: "i64",
        origin: "the number of ids reserved at once".into(),
    })?;
    tally
        .reservations
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let hi = update(db, counter, Change::Inc(step), tally, session.join()).await?;
    tally
        .ids
        .fetch_add(amount, std::sync::atomic::Ordering::Relaxed);
    first_of(seq, hi, step)
}

/// The first of the `step` ids an `$inc: step` answered with `hi` reserved.
fn first_of(seq: &'static Sequence, hi: i64, step: i64) -> Result<i64, Error> {
    hi.checked_sub(step - 1).ok_or_else(|| Error::Overflow {
        sequence: seq,
        value: i128::from(hi) - i128::from(step) + 1,
        target: "i64",
        origin: format!("the counter answered {hi} to $inc: {step}").into(),
    })
}

/// Raises the counter to the largest numeric id of its scope in the sequence's collection
/// (never lowers it), and returns its value.
pub(crate) async fn sync(db: &Database, counter: Counter<'_>, tally: &Tally) -> Result<i64, Error> {
    let seq = counter.seq;
    let collection = db.collection::<BsonDocument>(seq.collection);
    let (top, _) =
        largest::numeric_id(&collection, seq, counter.scope, Ids::Mixed, None, None).await?;
    let largest = top.as_ref().and_then(numeric::floor).unwrap_or(0);
    raise(db, counter, largest, tally).await
}

/// Raises the counter to `largest`, an id stored, and never below the first id: a counter
/// this creates starts where `start` says. Returns the counter's value.
pub(crate) async fn raise(
    db: &Database,
    counter: Counter<'_>,
    largest: i64,
    tally: &Tally,
) -> Result<i64, Error> {
    let floor = largest.max(counter.seq.start - 1);
    update(db, counter, Change::Max(floor), tally, None).await
}

/// What is done to the counter's `seq`.
#[derive(Debug, Clone, Copy)]
enum Change {
    /// `$inc`: reserves ids.
    Inc(i64),
    /// `$max`: raises the counter to ids written by other means. Guarded like `$inc`, or
    /// it would silently replace a counter of 1.5 by a larger number, while `$max` against
    /// a string leaves it as it is (numbers sort before strings).
    Max(i64),
}

impl Change {
    fn update(self) -> BsonDocument {
        let (operator, operand) = match self {
            Change::Inc(operand) => ("$inc", operand),
            Change::Max(operand) => ("$max", operand),
        };
        // An Int32 operand keeps an Int32 counter Int32 (MongoDB widens it itself on
        // overflow), so other tools reading the counter see the type they wrote.
        let operand = i32::try_from(operand).map_or(Bson::Int64(operand), Bson::Int32);
        doc! { operator: { "seq": operand } }
    }

    /// How far the change can move the counter up: `$max` leaves it or replaces it by the
    /// operand, an integer, so only the counter itself must be countable.
    fn reach(self) -> i64 {
        match self {
            Change::Inc(step) => step,
            Change::Max(_) => 0,
        }
    }
}

/// The counter `{ _id: <sequence> }` if its `seq` is a whole number that can take
/// `reach` and stay strictly within ±2^53 ([`numeric::double_range`]): an Int32, an Int64,
/// a whole Double or a whole Decimal128 in that range. That is every counter a sequence
/// meets in practice, and each stays countable after the update. Any other counter (a
/// missing `seq`, a fraction, a string, an Int64 beyond 2^53) is not matched, so it is
/// never updated here: the upsert then meets its `_id` instead (E11000, which MongoDB does
/// not retry by itself, as it does for a filter of equalities only), and
/// [`update_as_read`] looks at it. A counter that does not exist yet is created by the
/// upsert, its `seq` from the `$inc` alone (range operators are not copied into it).
///
/// One field, no `$or`, no `$expr`: MongoDB refuses `$expr` in the filter of an upsert
/// (error 224), and a filter of operators on one field is what every server evaluates
/// cheaply (nx-27017 spends about 250 µs on a four-branch `$or`, more than the whole
/// `findAndModify` otherwise). `$bitsAllClear: 0` matches exactly the numbers an i64 holds
/// without a fraction, Double and Decimal128 included, and no NaN, BinData aside, which
/// the range, type-bracketed to numbers, keeps out (nx-27017's matches fractions too:
/// there a Double counter of 1.5 still moves).
fn guard(id: Bson, reach: i64) -> BsonDocument {
    let range = numeric::double_range(reach);
    doc! {
        "_id": id,
        "seq": {
            "$bitsAllClear": 0,
            "$gte": *range.start(),
            "$lte": *range.end(),
        },
    }
}

/// Whether [`guard`] takes a counter holding `value` for a change of `reach`.
fn guarded(value: &Bson, reach: i64) -> bool {
    numeric::integral(value).is_some_and(|n| numeric::double_range(reach).contains(&n))
}

/// Applies `change` to the counter with an upsert, only if the counter stays countable,
/// and returns its new value. A counter that is not countable is left as it is and
/// reported with the value it holds.
///
/// With `transaction`, the update joins the caller's transaction, is sent once (a failed
/// write aborts the transaction, so nothing can be retried inside it), and any error is
/// returned with the driver's labels for the caller's retry of the whole transaction.
/// Without, it goes with the counter's write concern ([`CounterWriteConcern`]).
async fn update(
    db: &Database,
    counter: Counter<'_>,
    change: Change,
    tally: &Tally,
    mut transaction: Option<&mut ClientSession>,
) -> Result<i64, Error> {
    let seq = counter.seq;
    let counters = db.collection::<BsonDocument>(seq.counters);
    ensure_started(&counters, counter, tally).await?;
    let filter = guard(counter.id(), change.reach());
    let update = counter.creating(change.update());
    let mut attempt = 1;
    loop {
        let mut find_and_modify = counters
            .find_one_and_update(filter.clone(), update.clone())
            .upsert(true)
            .return_document(ReturnDocument::After);
        match transaction.as_deref_mut() {
            Some(session) => find_and_modify = find_and_modify.session(session),
            None => {
                if let Some(concern) = counter_write_concern(seq, &counters) {
                    find_and_modify = find_and_modify.write_concern(concern);
                }
            }
        }
        let reply = find_and_modify.await;
        if transaction.is_some() {
            return in_transaction(&counters, counter, reply).await;
        }
        let error = match reply {
            Ok(Some(stored)) => return new_value(counter, &stored),
            Ok(None) => None,
            Err(error) => Some(error),
        };
        // `None`: the server answered with no document; else the error's code.
        let code = error.as_ref().map(server_code);
        // The filter did not take the counter (the upsert then meets its `_id`: E11000),
        // or a server that does not apply the filter met a string (error 14), or answered
        // with no document, which some servers do for either, or after applying the
        // update during a concurrent first use. The counter as stored tells which.
        let unmatched = matches!(code, None | Some(Some(DUPLICATE_KEY | TYPE_MISMATCH)));
        if unmatched {
            match update_as_read(&counters, counter, change, &update, tally).await? {
                AsRead::Updated(stored) => return new_value(counter, &stored),
                // No counter, or one the guard takes now: the upsert race of a counter's
                // first use (or a unique index on `seq`), retried as the manual says.
                AsRead::NoCounter | AsRead::Guarded => {}
            }
        }
        if !unmatched || attempt >= UPSERT_ATTEMPTS {
            return Err(match error {
                None => Error::NoCounter {
                    sequence: seq,
                    counter: counter.shown(),
                    attempts: attempt,
                },
                Some(error) => Error::driver(
                    seq,
                    format!("updating the counter in `{}`", seq.counters),
                    error,
                ),
            });
        }
        tracing::debug!(
            sequence = seq.name,
            attempt,
            answer = ?error,
            "counter upsert raced with another first use; retrying"
        );
        tally.retried();
        attempt += 1;
        backoff(attempt).await;
    }
}

/// Makes sure the counter of a sequence that starts elsewhere than 1 exists before the
/// first update: created at `start - 1`, so that the first id handed out is `start`. A
/// counter that exists, made by seqid or by another tool, is left as it is; so is one that
/// another writer creates first (E11000). Once per allocator: a sequence that starts at 1
/// is the tutorial's, and its upsert creates the counter.
async fn ensure_started(
    counters: &mongodb::Collection<BsonDocument>,
    counter: Counter<'_>,
    tally: &Tally,
) -> Result<(), Error> {
    use std::sync::atomic::Ordering;
    let seq = counter.seq;
    if seq.start == 1 || tally.counter_exists.load(Ordering::Relaxed) {
        return Ok(());
    }
    let before = seq.start - 1;
    let before = i32::try_from(before).map_or(Bson::Int64(before), Bson::Int32);
    let mut created = doc! { "_id": counter.id(), "seq": before };
    created.extend(counter.scope.counter_fields(seq).unwrap_or_default());
    let mut insert = counters.insert_one(created);
    if let Some(concern) = counter_write_concern(seq, counters) {
        insert = insert.write_concern(concern);
    }
    match insert.await {
        Ok(_) => {}
        Err(error) if server_code(&error) == Some(DUPLICATE_KEY) => {}
        Err(error) => {
            return Err(Error::driver(
                seq,
                format!(
                    "creating the counter in `{}` at {} (start = {})",
                    seq.counters,
                    seq.start - 1,
                    seq.start
                ),
                error,
            ));
        }
    }
    tally.counter_exists.store(true, Ordering::Relaxed);
    Ok(())
}

/// The write concern of an update of the counter outside a transaction: the database's
/// own, with `w: "majority"` unless the type asks for the database's as it is. Its
/// journal and timeout stay: a single server (or a compatible one) may acknowledge a
/// majority write before its journal holds it, and only `journal: true` then survives a
/// crash. `None`: the database's own, inherited.
fn counter_write_concern(
    seq: &Sequence,
    counters: &mongodb::Collection<BsonDocument>,
) -> Option<WriteConcern> {
    match seq.counter_write_concern {
        CounterWriteConcern::Database => None,
        _ => {
            let mut concern = counters.write_concern().cloned().unwrap_or_default();
            concern.w = Some(Acknowledgment::Majority);
            Some(concern)
        }
    }
}

/// The answer to the counter's update inside the caller's transaction. A counter seqid
/// cannot count from is reported as such (read outside the transaction, which the failed
/// update aborted); any other failure is the driver's error, labels and all.
async fn in_transaction(
    counters: &mongodb::Collection<BsonDocument>,
    counter: Counter<'_>,
    reply: mongodb::error::Result<Option<BsonDocument>>,
) -> Result<i64, Error> {
    let seq = counter.seq;
    let error = match reply {
        Ok(Some(stored)) => return new_value(counter, &stored),
        Ok(None) => None,
        Err(error) => Some(error),
    };
    // Only an answer that may mean the guard did not take the counter (no document, a
    // duplicate `_id`, a type mismatch) is worth a look at what the counter holds. A
    // write conflict, the common error here (concurrent transactions take turns on the
    // counter), goes back at once: the caller's `and_run` retries the transaction, and a
    // read first would lengthen every turn by a round trip.
    let unmatched = matches!(
        error.as_ref().map(server_code),
        None | Some(Some(DUPLICATE_KEY | TYPE_MISMATCH))
    );
    if unmatched
        && let Some(value) = stored_seq(counters, counter).await?
        && !numeric::countable(&value, 0)
    {
        return Err(not_numeric(counter, value));
    }
    Err(match error {
        None => Error::NoCounter {
            sequence: seq,
            counter: counter.shown(),
            attempts: 1,
        },
        Some(error) => Error::driver(
            seq,
            format!(
                "updating the counter in `{}` in the caller's transaction",
                seq.counters
            ),
            error,
        ),
    })
}

/// What [`update_as_read`] found.
enum AsRead {
    /// The counter after the update.
    Updated(BsonDocument),
    /// There is no counter: the upsert race of a first use, which the caller retries.
    NoCounter,
    /// The counter is one the guard takes: it was created (or made countable) by another
    /// writer since the upsert looked, and the guarded upsert, one atomic `$inc` that no
    /// other writer can make fail, is the way to update it.
    Guarded,
}

/// For a counter the guarded upsert did not update: reads it, reports it if it is not
/// countable, else applies `update` on condition that it still holds the value read
/// (`{ _id, seq: <value> }`), so a counter changed meanwhile to something seqid cannot
/// count from is never touched. That is the way of an Int64 beyond ±2^53, which the
/// guard's range leaves out, and of a counter without `seq` (made by another tool).
///
/// A counter the guard takes is left to the guarded upsert ([`AsRead::Guarded`]): a
/// conditional update would have to win a race against every writer taking ids, and
/// while they keep taking them (a concurrent first use under load) it keeps losing.
async fn update_as_read(
    counters: &mongodb::Collection<BsonDocument>,
    counter: Counter<'_>,
    change: Change,
    update: &BsonDocument,
    tally: &Tally,
) -> Result<AsRead, Error> {
    let seq = counter.seq;
    let mut attempt = 1;
    loop {
        let condition = match stored(counters, counter).await? {
            None => return Ok(AsRead::NoCounter),
            // A counter without `seq` (made by another tool): `$inc` starts it.
            Some(None) => doc! { "$exists": false },
            Some(Some(value)) if guarded(&value, change.reach()) => return Ok(AsRead::Guarded),
            Some(Some(value)) if numeric::countable(&value, change.reach()) => {
                doc! { "$eq": value }
            }
            Some(Some(value)) => return Err(not_numeric(counter, value)),
        };
        // A round trip more than the guarded upsert: counted as a retry.
        tally.retried();
        let mut filter = counter.filter();
        filter.insert("seq", condition);
        let reply = counters
            .find_one_and_update(filter, update.clone())
            .return_document(ReturnDocument::After)
            .await
            .map_err(|error| {
                Error::driver(
                    seq,
                    format!("updating the counter in `{}`", seq.counters),
                    error,
                )
            })?;
        if let Some(stored) = reply {
            return Ok(AsRead::Updated(stored));
        }
        // Another writer moved the counter between the read and the update.
        if attempt >= CONTENDED_ATTEMPTS {
            return Err(Error::CounterContended {
                sequence: seq,
                counter: counter.shown(),
                attempts: attempt,
            });
        }
        attempt += 1;
        backoff(attempt).await;
    }
}

/// The counter's new value, as an id. The update applies only to a countable counter, so
/// only a server that does not apply the filter as MongoDB does gets the error here.
fn new_value(counter: Counter<'_>, stored: &BsonDocument) -> Result<i64, Error> {
    let value = stored.get("seq").cloned().unwrap_or(Bson::Null);
    numeric::integral(&value).ok_or_else(|| not_numeric(counter, value))
}

/// The counter's value, or `None` when there is no counter (or it has no `seq`).
pub(crate) async fn read(db: &Database, counter: Counter<'_>) -> Result<Option<i64>, Error> {
    let counters = db.collection::<BsonDocument>(counter.seq.counters);
    match stored_seq(&counters, counter).await? {
        None => Ok(None),
        Some(value) => match numeric::integral(&value) {
            Some(n) => Ok(Some(n)),
            None => Err(not_numeric(counter, value)),
        },
    }
}

/// Sets the counter to `last` (creating it if missing), with the counter's write concern.
pub(crate) async fn set(db: &Database, counter: Counter<'_>, last: i64) -> Result<(), Error> {
    let seq = counter.seq;
    let counters = db.collection::<BsonDocument>(seq.counters);
    let value = i32::try_from(last).map_or(Bson::Int64(last), Bson::Int32);
    let mut update = counters
        .update_one(
            counter.filter(),
            counter.creating(doc! { "$set": { "seq": value } }),
        )
        .upsert(true);
    if let Some(concern) = counter_write_concern(seq, &counters) {
        update = update.write_concern(concern);
    }
    update.await.map_err(|error| {
        Error::driver(
            seq,
            format!("setting the counter in `{}` to {last}", seq.counters),
            error,
        )
    })?;
    Ok(())
}

/// The `seq` the counter holds, or `None` if there is no counter or it has no `seq` (which
/// `$inc` creates).
async fn stored_seq(
    counters: &mongodb::Collection<BsonDocument>,
    counter: Counter<'_>,
) -> Result<Option<Bson>, Error> {
    Ok(stored(counters, counter).await?.flatten())
}

/// The counter as stored: `None` if there is none, else its `seq` (`None` if it has none).
async fn stored(
    counters: &mongodb::Collection<BsonDocument>,
    counter: Counter<'_>,
) -> Result<Option<Option<Bson>>, Error> {
    let seq = counter.seq;
    counters
        .find_one(counter.filter())
        .selection_criteria(PRIMARY)
        .await
        .map(|counter| counter.map(|c| c.get("seq").cloned()))
        .map_err(|error| {
            Error::driver(
                seq,
                format!("reading the counter in `{}`", seq.counters),
                error,
            )
        })
}

fn not_numeric(counter: Counter<'_>, value: Bson) -> Error {
    Error::CounterNotNumeric {
        sequence: counter.seq,
        counter: counter.shown(),
        value: Box::new(value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mongodb::bson::Decimal128;

    /// `guarded` says what the guard's filter matches: a whole number whose sum with the
    /// change stays strictly within ±2^53, of any numeric type.
    #[test]
    fn guarded_is_what_the_guard_matches() {
        let limit = 1_i64 << 53;
        assert!(guarded(&Bson::Int32(7), 1));
        assert!(guarded(&Bson::Int64(limit - 2), 1));
        assert!(!guarded(&Bson::Int64(limit - 1), 1));
        assert!(guarded(&Bson::Int64(limit - 1), 0));
        assert!(!guarded(&Bson::Int64(limit), 0));
        assert!(guarded(&Bson::Int64(-limit + 1), 0));
        assert!(!guarded(&Bson::Int64(i64::MAX), 0));
        assert!(guarded(&Bson::Double(41.0), 100));
        assert!(!guarded(&Bson::Double(1.5), 1));
        assert!(!guarded(&Bson::Double(f64::NAN), 1));
        let whole: Decimal128 = "12".parse().unwrap();
        let fraction: Decimal128 = "12.5".parse().unwrap();
        assert!(guarded(&Bson::Decimal128(whole), 1));
        assert!(!guarded(&Bson::Decimal128(fraction), 1));
        assert!(!guarded(&Bson::String("12".into()), 1));
        assert!(!guarded(&Bson::Null, 1));
    }
}
