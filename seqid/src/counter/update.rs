//! Advancing a counter: one `findAndModify` + `$inc` (or `$max`) whose filter lets it apply
//! only to a counter that stays a whole number an id can come from, so a counter holding
//! 1.5 (or a string, or a Double at 2^53) is reported as it is, never moved; a counter the
//! guard leaves out is read and updated as read. The source the allocators reserve from.

use mongodb::action::Action;
use mongodb::bson::{Bson, Document as BsonDocument, doc};
use mongodb::options::ReturnDocument;
use mongodb::{ClientSession, Database};

use super::missing::{create, made_before_first_use, refuse_if_numbered};
use super::{
    Change, Counter, TYPE_MISMATCH, UPSERT_ATTEMPTS, counter_write_concern, not_numeric, stored,
};
use crate::base::backoff::backoff;
use crate::base::error::{Doing, Error, ErrorKind};
use crate::base::numeric;
use crate::base::server::{DUPLICATE_KEY, noted, server_code};
use crate::fields::scope::Scope;
use crate::schema::sequence::Sequence;
use crate::state::allocator::{Reserver, Tally, interrupted};

/// Updates conditional on the value read lose only to other writers taking ids, which
/// the backoff spreads out; a bound all the same, so no caller waits forever.
const CONTENDED_ATTEMPTS: u32 = 16;

/// Reserves ids by adding to the counter: `$inc: amount × step` whose answer says the last
/// id is `hi` owns the `amount` ids `hi - (amount - 1) × step ..= hi` (pooled semantics,
/// so writers adding one step at a time never collide). It owns what it needs: it runs
/// in the allocator's flusher.
pub(crate) struct CounterReserver {
    pub db: Database,
    pub seq: &'static Sequence,
    pub scope: Scope,
}

impl Reserver for CounterReserver {
    async fn reserve(&self, amount: u64, tally: &Tally) -> Result<i64, Error> {
        let (seq, scope) = (self.seq, &self.scope);
        let counter = Counter { seq, scope };
        let increment = increment(counter, amount)?;
        let value = update(&self.db, counter, Change::Inc(increment), tally, None).await?;
        first_of(counter, value, amount)
    }

    fn step(&self) -> i64 {
        self.seq.layout.step
    }

    fn interrupted(&self) -> Error {
        interrupted(self.seq, &self.scope)
    }
}

/// What `$inc` adds to reserve `amount` ids: `amount × step`.
pub(super) fn increment(counter: Counter<'_>, amount: u64) -> Result<i64, Error> {
    let step = counter.seq.layout.step;
    i64::try_from(amount)
        .ok()
        .and_then(|amount| amount.checked_mul(step))
        .ok_or_else(|| {
            Error::new(
                counter.seq,
                ErrorKind::Overflow {
                    value: i128::from(amount) * i128::from(step),
                    target: "i64",
                    origin: format!("{amount} ids reserved at once, {step} apart").into(),
                },
            )
        })
}

/// The first of the `amount` ids an `$inc` that left the counter at `value` reserved.
pub(super) fn first_of(counter: Counter<'_>, value: i64, amount: u64) -> Result<i64, Error> {
    let last = counter.last_of(value)?;
    let step = i128::from(counter.seq.layout.step);
    let first = i128::from(last) - (i128::from(amount) - 1) * step;
    i64::try_from(first).map_err(|_| {
        Error::new(
            counter.seq,
            ErrorKind::Overflow {
                value: first,
                target: "i64",
                origin: format!("the counter answered {value} to the reservation of {amount} ids")
                    .into(),
            },
        )
    })
}

/// The counter `filter` finds if its value (`value_key`) is a whole number that can take
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
/// cheaply (an `$or` cost nx-27017 more than the rest of the `findAndModify`: BENCHMARKS.md,
/// *One task, as users run it*). `$bitsAllClear: 0` matches exactly the numbers an i64 holds
/// without a fraction, Double and Decimal128 included, and no NaN, BinData aside, which
/// the range, type-bracketed to numbers, keeps out (nx-27017's matches fractions too:
/// there a Double counter of 1.5 still moves).
fn guard(mut filter: BsonDocument, value_key: &str, reach: i64) -> BsonDocument {
    let range = numeric::double_range(reach);
    let bounds = doc! { "$bitsAllClear": 0, "$gte": *range.start(), "$lte": *range.end() };
    filter.insert(value_key, bounds);
    filter
}

/// Whether [`guard`] takes a counter holding `value` for a change of `reach`.
fn guarded(value: &Bson, reach: i64) -> bool {
    numeric::integral(value).is_some_and(|n| numeric::double_range(reach).contains(&n))
}

/// Applies `change` to the counter (with an upsert, for a counter found by `_id`), only
/// if the counter stays countable, and returns its new value. A counter that is not
/// countable is left as it is and reported with the value it holds.
///
/// With `transaction`, the update joins the caller's transaction, is sent once (a failed
/// write aborts the transaction, so nothing can be retried inside it), and any error is
/// returned with the driver's labels for the caller's retry of the whole transaction.
/// Without, it goes with the counter's write concern ([`CounterWriteConcern`]).
pub(super) async fn update(
    db: &Database,
    counter: Counter<'_>,
    change: Change,
    tally: &Tally,
    mut transaction: Option<&mut ClientSession>,
) -> Result<i64, Error> {
    use std::sync::atomic::Ordering;
    let seq = counter.seq;
    let counters = db.collection::<BsonDocument>(seq.counters);
    // In a transaction, `gapless::take` has seen to it, in the transaction's
    // sight: one made outside now might wait on the transaction's own.
    if transaction.is_none() {
        made_before_first_use(db, &counters, counter, change, tally).await?;
    }
    // Else the first `$inc` goes without the upsert: a counter that exists answers it as
    // the upsert would, at no cost more, and one that does not is noticed (no document)
    // and made by the upsert only once no number is found stored without it.
    let taking = matches!(change, Change::Inc(_));
    let mut upsert =
        counter.layout().by_id() && (!taking || tally.counter_checked.load(Ordering::Relaxed));
    let filter = guard(counter.filter(), counter.value_key(), change.reach());
    let update = counter.creating(change.update(counter));
    // In the caller's transaction, the transaction's write concern; else the counter's.
    let concern = match transaction {
        Some(_) => None,
        None => counter_write_concern(seq, &counters),
    };
    let mut attempt = 1;
    loop {
        let reply = counters
            .find_one_and_update(filter.clone(), update.clone())
            .upsert(upsert)
            .return_document(ReturnDocument::After)
            .optional(transaction.as_deref_mut(), |a, session| a.session(session))
            .optional(concern.clone(), |a, concern| a.write_concern(concern))
            .await;
        if let Ok(Some(_)) = reply {
            tally.counter_checked.store(true, Ordering::Relaxed);
        }
        if transaction.is_some() {
            // Nothing matched, without the upsert: the transaction goes on (only a failed
            // command aborts it), and the upsert follows once no number is found stored.
            if !upsert && counter.layout().by_id() && matches!(reply, Ok(None)) {
                if stored(&counters, counter).await?.is_none() {
                    refuse_if_numbered(db, counter).await?;
                }
                tally.counter_checked.store(true, Ordering::Relaxed);
                upsert = true;
                continue;
            }
            return in_transaction(&counters, counter, reply).await;
        }
        if let Ok(Some(stored)) = &reply {
            return new_value(counter, stored);
        }
        // `None`: the server answered with no document.
        let error = reply.err();
        // The filter did not take the counter (the upsert then meets its `_id`: E11000;
        // without an upsert, no document), or a server that does not apply the filter met
        // a string (error 14), or answered with no document, which some servers do for
        // either, or after applying the update during a concurrent first use. The counter
        // as stored tells which.
        let unmatched = unmatched(error.as_ref());
        if unmatched {
            match update_as_read(&counters, counter, change, &update, tally).await? {
                AsRead::Updated(stored) => return new_value(counter, &stored),
                // No counter found by `_id` at its first `$inc`, sent without the upsert:
                // the upsert makes it, once no number is found stored without it.
                AsRead::NoCounter if !upsert && counter.layout().by_id() => {
                    refuse_if_numbered(db, counter).await?;
                    tally.counter_checked.store(true, Ordering::Relaxed);
                    upsert = true;
                    continue;
                }
                // No counter found by fields: made now, then updated by the next round.
                AsRead::NoCounter if !counter.layout().by_id() => {
                    create(&counters, counter, counter.before_start()?).await?;
                }
                // No counter, or one the guard takes now: the upsert race of a counter's
                // first use (or a unique index on its value), retried as the manual says.
                AsRead::NoCounter | AsRead::Guarded => {}
            }
        }
        if !unmatched || attempt >= UPSERT_ATTEMPTS {
            return Err(failed(counter, error, attempt, ""));
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

/// The answer to the counter's update inside the caller's transaction. A counter seqid
/// cannot count from is reported as such (read outside the transaction, which the failed
/// update aborted); any other failure is the driver's error, labels and all.
async fn in_transaction(
    counters: &mongodb::Collection<BsonDocument>,
    counter: Counter<'_>,
    reply: mongodb::error::Result<Option<BsonDocument>>,
) -> Result<i64, Error> {
    if let Ok(Some(stored)) = &reply {
        return new_value(counter, stored);
    }
    let error = reply.err();
    // Only an answer that may mean the guard did not take the counter (no document, a
    // duplicate `_id`, a type mismatch) is worth a look at what the counter holds. A
    // write conflict, the common error here (concurrent transactions take turns on the
    // counter), goes back at once: the caller's retry (`Transaction`) runs the
    // transaction again, and a read first would lengthen every turn by a round trip.
    if unmatched(error.as_ref())
        && let Some(value) = stored(counters, counter).await?.flatten()
        && !numeric::countable(&value, 0)
    {
        return Err(not_numeric(counter, value));
    }
    Err(failed(counter, error, 1, " in the caller's transaction"))
}

/// Whether an answer may mean the guard did not take the counter: no document (`None`),
/// a duplicate `_id` (the upsert met the counter) or a type mismatch.
fn unmatched(error: Option<&mongodb::error::Error>) -> bool {
    matches!(
        error.map(server_code),
        None | Some(Some(DUPLICATE_KEY | TYPE_MISMATCH))
    )
}

/// The error of an update of the counter (`within` says where it ran) that found no
/// counter in `attempts` (`error` is `None`), or failed with `error`.
fn failed(
    counter: Counter<'_>,
    error: Option<mongodb::error::Error>,
    attempts: u32,
    within: &str,
) -> Error {
    let seq = counter.seq;
    match error {
        None => Error::new(
            seq,
            ErrorKind::NoCounter {
                counter: counter.shown(),
                attempts,
            },
        ),
        Some(error) => Error::driver(
            seq,
            format!("updating the counter in `{}`{within}", seq.counters),
            noted(error),
        ),
    }
}

/// What [`update_as_read`] found.
enum AsRead {
    /// The counter after the update.
    Updated(BsonDocument),
    /// There is no counter: the upsert race of a first use, which the caller retries,
    /// or a counter found by fields that the caller creates.
    NoCounter,
    /// The counter is one the guard takes: it was created (or made countable) by another
    /// writer since the update looked, and the guarded update, one atomic `$inc` that no
    /// other writer can make fail, is the way to update it.
    Guarded,
}

/// For a counter the guarded update did not update: reads it, reports it if it is not
/// countable, else applies `update` on condition that it still holds the value read
/// (`{ <filter>, <value_key>: <value> }`), so a counter changed meanwhile to something
/// seqid cannot count from is never touched. That is the way of an Int64 beyond ±2^53,
/// which the guard's range leaves out, and of a counter without its value field (made by
/// another tool).
///
/// A counter the guard takes is left to the guarded update ([`AsRead::Guarded`]): a
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
            // A counter without a value (made by another tool): `$inc` starts it.
            Some(None) => doc! { "$exists": false },
            Some(Some(value)) if guarded(&value, change.reach()) => return Ok(AsRead::Guarded),
            Some(Some(value)) if numeric::countable(&value, change.reach()) => {
                doc! { "$eq": value }
            }
            Some(Some(value)) => return Err(not_numeric(counter, value)),
        };
        // A round trip more than the guarded update: counted as a retry.
        tally.retried();
        let mut filter = counter.filter();
        filter.insert(counter.value_key(), condition);
        let reply = counters
            .find_one_and_update(filter, update.clone())
            .return_document(ReturnDocument::After)
            .await
            .doing(seq, || {
                format!("updating the counter in `{}`", seq.counters)
            })?;
        if let Some(stored) = reply {
            return Ok(AsRead::Updated(stored));
        }
        // Another writer moved the counter between the read and the update.
        if attempt >= CONTENDED_ATTEMPTS {
            return Err(counter.contended(attempt));
        }
        attempt += 1;
        backoff(attempt).await;
    }
}

/// The counter's new value, as an integer. The update applies only to a countable
/// counter, so only a server that does not apply the filter as MongoDB does gets the
/// error here.
pub(super) fn new_value(counter: Counter<'_>, stored: &BsonDocument) -> Result<i64, Error> {
    let value = stored
        .get(counter.value_key())
        .cloned()
        .unwrap_or(Bson::Null);
    numeric::integral(&value).ok_or_else(|| not_numeric(counter, value))
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
