//! The counter document, laid out as the sequence's [`Layout`] says: the tutorial's
//! `{ _id: <sequence>, seq: <last id handed out> }` (for a scope, `_id` names the sequence
//! and the scope's values: see [`scope`](crate::base::scope)), or another tool's, found by
//! fields. It is advanced with one `findAndModify` + `$inc`, as in the MongoDB tutorial.
//! Its filter lets the `$inc` apply only to a counter that stays a whole number an id can
//! come from, so a counter holding 1.5 (or a string, or a Double at 2^53) is reported as
//! it is, never moved.
//!
//! A counter found by `_id` is created by the upsert, whose `_id` index makes a race of
//! first uses one counter. A counter found by fields (its `_id` an ObjectId) is created
//! only by an insert after the tool's unique index on those fields is made, since an
//! upsert without it could create two counters for one sequence; its updates do not
//! upsert.

use mongodb::bson::{Bson, Document as BsonDocument, doc};
use mongodb::options::{Acknowledgment, ReturnDocument, WriteConcern};
use mongodb::{ClientSession, Database};

use crate::base::backoff::backoff;
use crate::base::error::Error;
use crate::base::layout::{Layout, ScopeEncoding, Width};
use crate::base::numeric;
use crate::base::scope::Scope;
use crate::base::sequence::{CounterWriteConcern, Sequence};
use crate::base::server::{DUPLICATE_KEY, PRIMARY, server_code, unique_index};
use crate::base::session::Session;
use crate::round_trip::largest;
use crate::state::allocator::{Source, Tally, interrupted};

/// Upserts that race on a new counter fail with E11000; the manual says a retry cannot
/// fail again absent a delete, so a few attempts are plenty. The same bound holds for a
/// server that answers an upsert with no document.
const UPSERT_ATTEMPTS: u32 = 5;
const TYPE_MISMATCH: i32 = 14;
/// An index of the same keys exists under another name, or with other options: the
/// counter's fields are indexed already (by the tool, or by a server that names indexes
/// itself).
const INDEX_OPTIONS_CONFLICT: i32 = 85;
const INDEX_KEY_SPECS_CONFLICT: i32 = 86;
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
    fn layout(&self) -> &'static Layout {
        &self.seq.layout
    }

    /// The fields that find the counter, all equalities (an upsert copies them).
    pub(crate) fn filter(&self) -> BsonDocument {
        let (seq, layout) = (self.seq, self.layout());
        if layout.by_id() {
            return doc! { "_id": self.scope.counter_id(seq) };
        }
        let mut filter = doc! { layout.name_key: seq.name };
        if let Some(key) = layout.field_key {
            filter.insert(key, seq.field);
        }
        if let ScopeEncoding::InField(key) = layout.scope {
            filter.insert(key, self.scope.reference_value());
        }
        filter
    }

    /// The fields that find the counter, for messages: `_id: "userid"`, or
    /// `model: "Book", field: "_id"`.
    fn shown(&self) -> Box<str> {
        let fields: Vec<String> = self
            .filter()
            .iter()
            .map(|(key, value)| format!("{key}: {value}"))
            .collect();
        fields.join(", ").into()
    }

    /// The field that holds the counter's value.
    fn value_key(&self) -> &'static str {
        self.layout().value_key
    }

    /// The value the counter holds when `last` is the last id handed out.
    fn value_of(&self, last: i64) -> Result<i64, Error> {
        last.checked_add(self.layout().offset())
            .ok_or_else(|| self.overflow(i128::from(last) + i128::from(self.layout().offset())))
    }

    /// The last id handed out when the counter holds `value`.
    fn last_of(&self, value: i64) -> Result<i64, Error> {
        value
            .checked_sub(self.layout().offset())
            .ok_or_else(|| self.overflow(i128::from(value) - i128::from(self.layout().offset())))
    }

    fn overflow(&self, value: i128) -> Error {
        Error::Overflow {
            sequence: self.seq,
            value,
            target: "i64",
            origin: format!(
                "the counter {{ {} }} in `{}`",
                self.shown(),
                self.seq.counters
            )
            .into(),
        }
    }

    /// `value` typed as the layout writes it.
    fn written(&self, value: i64) -> Bson {
        match self.layout().width {
            Width::Int64 => Bson::Int64(value),
            _ => i32::try_from(value).map_or(Bson::Int64(value), Bson::Int32),
        }
    }

    /// A new counter whose value is `value`: the fields that find it, the fields the
    /// layout creates it with, and for a scope in its `_id` the fields people and other
    /// tools find it by.
    fn created(&self, value: i64) -> BsonDocument {
        let mut created = self.filter();
        created.insert(self.value_key(), self.written(value));
        for (key, value) in self.layout().created_with {
            created.insert(*key, *value);
        }
        if let Some(fields) = self.scope.counter_fields(self.seq)
            && self.layout().scope == ScopeEncoding::InId
        {
            created.extend(fields);
        }
        created
    }

    /// `update`, and for a scope's counter the fields it is created with for people and
    /// other tools (`$setOnInsert`). Only a counter found by `_id` is upserted.
    fn creating(&self, mut update: BsonDocument) -> BsonDocument {
        if let Some(fields) = self.scope.counter_fields(self.seq)
            && self.layout().scope == ScopeEncoding::InId
        {
            update.insert("$setOnInsert", fields);
        }
        update
    }

    /// The value a counter holds before the first id, `start`, is handed out.
    fn before_start(&self) -> Result<i64, Error> {
        let seq = self.seq;
        let last = seq
            .start
            .checked_sub(seq.layout.step)
            .ok_or_else(|| self.overflow(i128::from(seq.start) - i128::from(seq.layout.step)))?;
        self.value_of(last)
    }

    /// Whether the counter that one `$inc` creates from nothing hands out `start` first:
    /// `$inc: n × step` stores `n × step`, whose first id is `step - offset`. Else the
    /// counter is created before its first update, at [`before_start`](Self::before_start).
    fn upsert_starts_right(&self) -> bool {
        let layout = self.layout();
        layout.by_id() && self.seq.start == layout.step - layout.offset()
    }

    /// The largest id of the sequence (`start + k × step`) not above `largest`, or the
    /// one before `start` (`start - step`, a counter before its first id) if `largest`
    /// is below that.
    pub(crate) fn last_at_most(&self, largest: i64) -> Result<i64, Error> {
        let step = i128::from(self.seq.layout.step);
        let before = i128::from(self.seq.start) - step;
        let largest = i128::from(largest);
        let last = match largest <= before {
            true => before,
            false => before + (largest - before).div_euclid(step) * step,
        };
        i64::try_from(last).map_err(|_| self.overflow(last))
    }
}

/// Reserves ids by adding to the counter: `$inc: amount × step` whose answer says the last
/// id is `hi` owns the `amount` ids `hi - (amount - 1) × step ..= hi` (pooled semantics,
/// so writers adding one step at a time never collide). It owns what it needs: it runs
/// in the allocator's flusher.
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
        found
    } else if unchecked && !counter.upsert_starts_right() {
        read_in_transaction(&counters, counter, session).await?
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
    tally
        .ids
        .fetch_add(amount, std::sync::atomic::Ordering::Relaxed);
    first_of(counter, value, amount)
}

/// What `$inc` adds to reserve `amount` ids: `amount × step`.
fn increment(counter: Counter<'_>, amount: u64) -> Result<i64, Error> {
    let step = counter.seq.layout.step;
    i64::try_from(amount)
        .ok()
        .and_then(|amount| amount.checked_mul(step))
        .ok_or_else(|| Error::Overflow {
            sequence: counter.seq,
            value: i128::from(amount) * i128::from(step),
            target: "i64",
            origin: format!("{amount} ids reserved at once, {step} apart").into(),
        })
}

/// The first of the `amount` ids an `$inc` that left the counter at `value` reserved.
fn first_of(counter: Counter<'_>, value: i64, amount: u64) -> Result<i64, Error> {
    let last = counter.last_of(value)?;
    let step = i128::from(counter.seq.layout.step);
    let first = i128::from(last) - (i128::from(amount) - 1) * step;
    i64::try_from(first).map_err(|_| Error::Overflow {
        sequence: counter.seq,
        value: first,
        target: "i64",
        origin: format!("the counter answered {value} to the reservation of {amount} ids").into(),
    })
}

/// Raises the counter to the largest numeric id of its scope in the sequence's collection
/// (never lowers it), and returns its value.
pub(crate) async fn sync(db: &Database, counter: Counter<'_>, tally: &Tally) -> Result<i64, Error> {
    let seq = counter.seq;
    let collection = db.collection::<BsonDocument>(seq.collection);
    // No numeric id stored: the counter is raised to the one before `start`, at most.
    let largest = largest::stored_floor(&collection, seq, counter.scope)
        .await?
        .unwrap_or(i64::MIN);
    raise(db, counter, largest, tally).await
}

/// Raises the counter so that the next id it hands out is above `largest`, an id stored,
/// and never below the first id: a counter this creates starts where `start` says.
/// Returns the last id handed out, as the counter now says.
///
/// With a step, the counter is raised to the largest id of the sequence (`start + k ×
/// step`) not above `largest`: the next id is then above `largest` and still one of the
/// sequence's, so writers that interleave by step (odd and even ids) keep to their own.
pub(crate) async fn raise(
    db: &Database,
    counter: Counter<'_>,
    largest: i64,
    tally: &Tally,
) -> Result<i64, Error> {
    let floor = counter.last_at_most(largest)?;
    let value = counter.value_of(floor)?;
    let value = update(db, counter, Change::Max(value), tally, None).await?;
    counter.last_of(value)
}

/// What is done to the counter's value (its `seq`, in the tutorial's layout), in the
/// units the counter holds.
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
    fn update(self, counter: Counter<'_>) -> BsonDocument {
        let (operator, operand) = match self {
            Change::Inc(operand) => ("$inc", operand),
            Change::Max(operand) => ("$max", operand),
        };
        // Typed as the layout writes its values: an Int32 operand keeps an Int32 counter
        // Int32 (MongoDB widens it itself on overflow), so other tools reading the counter
        // see the type they wrote; `$max` writes its operand's type when it raises.
        doc! { operator: { counter.value_key(): counter.written(operand) } }
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
    filter.insert(
        value_key,
        doc! {
            "$bitsAllClear": 0,
            "$gte": *range.start(),
            "$lte": *range.end(),
        },
    );
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
async fn update(
    db: &Database,
    counter: Counter<'_>,
    change: Change,
    tally: &Tally,
    mut transaction: Option<&mut ClientSession>,
) -> Result<i64, Error> {
    use std::sync::atomic::Ordering;
    let seq = counter.seq;
    let counters = db.collection::<BsonDocument>(seq.counters);
    // In a transaction, `reserve_in_transaction` has seen to it, in the transaction's
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
    let value_key = counter.value_key();
    let filter = guard(counter.filter(), value_key, change.reach());
    let update = counter.creating(change.update(counter));
    let mut attempt = 1;
    loop {
        let mut find_and_modify = counters
            .find_one_and_update(filter.clone(), update.clone())
            .upsert(upsert)
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
        let error = match reply {
            Ok(Some(stored)) => return new_value(counter, &stored),
            Ok(None) => None,
            Err(error) => Some(error),
        };
        // `None`: the server answered with no document; else the error's code.
        let code = error.as_ref().map(server_code);
        // The filter did not take the counter (the upsert then meets its `_id`: E11000;
        // without an upsert, no document), or a server that does not apply the filter met
        // a string (error 14), or answered with no document, which some servers do for
        // either, or after applying the update during a concurrent first use. The counter
        // as stored tells which.
        let unmatched = matches!(code, None | Some(Some(DUPLICATE_KEY | TYPE_MISMATCH)));
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

/// Makes the counter at [`Counter::before_start`] if it does not exist, so that the first
/// id handed out is `start`: a counter found by `_id` whose upsert would not start there,
/// or one found by fields (whose updates do not upsert). A counter that exists, made by
/// seqid or by another tool, is left as it is; so is one that another writer makes first
/// (E11000). Before an id is taken (`$inc`), a counter is made only if no number of the
/// sequence is stored without it ([`refuse_if_numbered`]); `$max` (`sync_counter`) makes
/// it regardless, to start above them.
async fn make_if_missing(
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

/// The safety net of a counter about to be made: refuses ([`Error::CounterMissing`]) when
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
async fn refuse_if_numbered(db: &Database, counter: Counter<'_>) -> Result<(), Error> {
    let seq = counter.seq;
    let collection = db.collection::<BsonDocument>(seq.collection);
    let Some(largest) = largest::of_sequence(&collection, seq, counter.scope).await? else {
        return Ok(());
    };
    let counters = db.collection::<BsonDocument>(seq.counters);
    if stored(&counters, counter).await?.is_some() {
        return Ok(());
    }
    Err(Error::CounterMissing {
        sequence: seq,
        counter: counter.shown(),
        scope: counter.scope.to_string().into(),
        largest: Box::new(largest),
    })
}

/// Creates the counter found by fields at `value`: the tool's unique index on those
/// fields first, so that two writers creating it at once make one counter (the second
/// insert meets the index, E11000, and leaves the first's).
async fn create(
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
    let mut insert = counters.insert_one(counter.created(value));
    if let Some(concern) = counter_write_concern(seq, counters) {
        insert = insert.write_concern(concern);
    }
    match insert.await {
        Ok(_) => Ok(()),
        Err(error) if server_code(&error) == Some(DUPLICATE_KEY) => Ok(()),
        Err(error) => Err(Error::driver(
            seq,
            format!(
                "creating the counter {{ {} }} in `{}` at {value} (start = {})",
                counter.shown(),
                seq.counters,
                seq.start
            ),
            error,
        )),
    }
}

/// The unique index that makes a counter found by fields one document: the tool's own
/// (same keys, same name), so that the tool, making its index, finds it made. One of the
/// same keys under another name counts as made.
async fn ensure_unique_index(
    counters: &mongodb::Collection<BsonDocument>,
    counter: Counter<'_>,
) -> Result<(), Error> {
    let (seq, layout) = (counter.seq, counter.layout());
    let (keys, name) = crate::base::server::counter_index(layout);
    match counters.create_index(unique_index(keys, &name)).await {
        Ok(_) => Ok(()),
        Err(error)
            if matches!(
                server_code(&error),
                Some(INDEX_OPTIONS_CONFLICT | INDEX_KEY_SPECS_CONFLICT)
            ) =>
        {
            Ok(())
        }
        Err(error) => Err(Error::driver(
            seq,
            format!(
                "making the unique index `{name}` that keeps one counter per sequence in `{}` ({})",
                seq.counters, layout.tool
            ),
            error,
        )),
    }
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
    // counter), goes back at once: the caller's retry (`T::transaction`) runs the
    // transaction again, and a read first would lengthen every turn by a round trip.
    let unmatched = matches!(
        error.as_ref().map(server_code),
        None | Some(Some(DUPLICATE_KEY | TYPE_MISMATCH))
    );
    if unmatched
        && let Some(value) = stored_value(counters, counter).await?
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

/// The counter's new value, as an integer. The update applies only to a countable
/// counter, so only a server that does not apply the filter as MongoDB does gets the
/// error here.
fn new_value(counter: Counter<'_>, stored: &BsonDocument) -> Result<i64, Error> {
    let value = stored
        .get(counter.value_key())
        .cloned()
        .unwrap_or(Bson::Null);
    numeric::integral(&value).ok_or_else(|| not_numeric(counter, value))
}

/// The last id the counter has handed out, or `None` when there is no counter (or it
/// has no value).
pub(crate) async fn read(db: &Database, counter: Counter<'_>) -> Result<Option<i64>, Error> {
    let counters = db.collection::<BsonDocument>(counter.seq.counters);
    match stored_value(&counters, counter).await? {
        None => Ok(None),
        Some(value) => match numeric::integral(&value) {
            Some(n) => counter.last_of(n).map(Some),
            None => Err(not_numeric(counter, value)),
        },
    }
}

/// A counter an upsert would not start right (or, found by fields, never upserts) is
/// made, if missing, before its first update through this allocator: outside any
/// transaction, which could not make the tool's unique index.
async fn made_before_first_use(
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

/// Reads the counter in the caller's transaction (see [`reserve_in_transaction`]):
/// whether its snapshot holds it. A failure is the driver's error, labels and all, as the
/// `$inc`'s would be.
async fn read_in_transaction(
    counters: &mongodb::Collection<BsonDocument>,
    counter: Counter<'_>,
    session: &mut Session<'_>,
) -> Result<bool, Error> {
    let seq = counter.seq;
    let find = counters
        .find_one(counter.filter())
        .projection(doc! { counter.value_key(): 1 });
    let found = match session.join() {
        Some(session) => find.session(session).await,
        None => find.await,
    };
    found.map(|found| found.is_some()).map_err(|error| {
        Error::driver(
            seq,
            format!(
                "reading the counter in `{}` in the caller's transaction",
                seq.counters
            ),
            error,
        )
    })
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
    let inserted = match session.join() {
        Some(session) => insert.session(session).await,
        None => insert.await,
    };
    inserted.map(drop).map_err(|error| {
        Error::driver(
            seq,
            format!(
                "creating the counter {{ {} }} in `{}` at {value} (start = {}) in the \
                 caller's transaction, whose snapshot has none",
                counter.shown(),
                seq.counters,
                seq.start
            ),
            error,
        )
    })
}

/// Every counter of `seq` (one per scope that has one), each with the last id it handed
/// out (`None`: a counter without a value, made by another tool), in the order of their
/// `_id`. A counter of a scope seqid cannot read back (another tool's, holding a value no
/// scope has) is passed over.
pub(crate) async fn every(
    db: &Database,
    seq: &'static Sequence,
) -> Result<Vec<(Scope, Option<i64>)>, Error> {
    use futures_util::TryStreamExt;
    let layout = &seq.layout;
    let filter = match layout.scope {
        ScopeEncoding::InId if !seq.scope.is_empty() => {
            // Anchored, so that MongoDB reads the `_id` index from the prefix on.
            doc! { "_id": { "$regex": format!("^{}", regex_escaped(&Scope::counter_id_prefix(seq))) } }
        }
        ScopeEncoding::InField(key) => {
            let mut filter = Counter {
                seq,
                scope: &Scope::NONE,
            }
            .filter();
            filter.remove(key);
            filter
        }
        _ => Counter {
            seq,
            scope: &Scope::NONE,
        }
        .filter(),
    };
    let failed = |error| {
        Error::driver(
            seq,
            format!("listing the counters in `{}`", seq.counters),
            error,
        )
    };
    let stored: Vec<BsonDocument> = db
        .collection::<BsonDocument>(seq.counters)
        .find(filter)
        .sort(doc! { "_id": 1 })
        .selection_criteria(PRIMARY)
        .await
        .map_err(failed)?
        .try_collect()
        .await
        .map_err(failed)?;
    let mut counters = Vec::with_capacity(stored.len());
    for document in stored {
        let scope = match layout.scope {
            ScopeEncoding::InId if !seq.scope.is_empty() => document
                .get_str("_id")
                .ok()
                .and_then(|id| Scope::of_counter_id(seq, id)),
            ScopeEncoding::InField(key) => {
                Scope::of_reference_value(seq, document.get(key).unwrap_or(&Bson::Null))
            }
            _ => Some(Scope::NONE),
        };
        let Some(scope) = scope else { continue };
        let counter = Counter { seq, scope: &scope };
        let last = match document.get(counter.value_key()) {
            None => None,
            Some(value) => match numeric::integral(value) {
                Some(n) => Some(counter.last_of(n)?),
                None => return Err(not_numeric(counter, value.clone())),
            },
        };
        counters.push((scope, last));
    }
    Ok(counters)
}

/// `text` with the characters a regular expression gives a meaning to escaped.
fn regex_escaped(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if "\\^$.|?*+()[]{}".contains(c) {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

/// Sets the counter so that `last` is the last id handed out (creating it if missing),
/// with the counter's write concern.
pub(crate) async fn set(db: &Database, counter: Counter<'_>, last: i64) -> Result<(), Error> {
    let seq = counter.seq;
    let counters = db.collection::<BsonDocument>(seq.counters);
    let value = counter.value_of(last)?;
    let failed = |error| {
        Error::driver(
            seq,
            format!("setting the counter in `{}` to {last}", seq.counters),
            error,
        )
    };
    let by_id = counter.layout().by_id();
    // A counter found by fields is created by an insert (see the module's notes), and
    // updated if another writer creates it meanwhile.
    for _ in 0..UPSERT_ATTEMPTS {
        let set = doc! { "$set": { counter.value_key(): counter.written(value) } };
        let mut update = counters
            .update_one(counter.filter(), counter.creating(set))
            .upsert(by_id);
        if let Some(concern) = counter_write_concern(seq, &counters) {
            update = update.write_concern(concern);
        }
        let result = update.await.map_err(failed)?;
        if by_id || result.matched_count > 0 {
            return Ok(());
        }
        ensure_unique_index(&counters, counter).await?;
        let mut insert = counters.insert_one(counter.created(value));
        if let Some(concern) = counter_write_concern(seq, &counters) {
            insert = insert.write_concern(concern);
        }
        match insert.await {
            Ok(_) => return Ok(()),
            Err(error) if server_code(&error) == Some(DUPLICATE_KEY) => {}
            Err(error) => return Err(failed(error)),
        }
    }
    Err(Error::CounterContended {
        sequence: seq,
        counter: counter.shown(),
        attempts: UPSERT_ATTEMPTS,
    })
}

/// The value the counter holds, or `None` if there is no counter or it has no value
/// (which `$inc` creates).
async fn stored_value(
    counters: &mongodb::Collection<BsonDocument>,
    counter: Counter<'_>,
) -> Result<Option<Bson>, Error> {
    Ok(stored(counters, counter).await?.flatten())
}

/// The counter as stored: `None` if there is none, else its value (`None` if it has
/// none).
async fn stored(
    counters: &mongodb::Collection<BsonDocument>,
    counter: Counter<'_>,
) -> Result<Option<Option<Bson>>, Error> {
    let seq = counter.seq;
    counters
        .find_one(counter.filter())
        .selection_criteria(PRIMARY)
        .await
        .map(|found| found.map(|c| c.get(counter.value_key()).cloned()))
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
