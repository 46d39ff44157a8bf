//! The counters document: `{ _id: <sequence>, seq: <last id handed out> }`, advanced with
//! one `findAndModify` + `$inc` (upsert), as in the MongoDB tutorial.

use mongodb::Database;
use mongodb::bson::{Bson, Document as BsonDocument, doc};
use mongodb::options::ReturnDocument;

use crate::allocator::{Source, Tally};
use crate::error::{Error, server_code};
use crate::optimistic::backoff;
use crate::write::{self, DUPLICATE_KEY, PRIMARY};
use crate::{Sequence, numeric};

/// Upserts that race on a new counter fail with E11000; the manual says a retry cannot
/// fail again absent a delete, so a few attempts are plenty. The same bound holds for a
/// server that answers an upsert with no document.
const UPSERT_ATTEMPTS: u32 = 5;
const TYPE_MISMATCH: i32 = 14;

/// Reserves ids by adding to the counter: `$inc: amount` returning `hi` owns
/// `hi - amount + 1 ..= hi` (pooled semantics, so plain `$inc: 1` writers never collide).
pub(crate) struct CounterSource<'a> {
    pub db: &'a Database,
    pub sequence: &'a Sequence,
}

impl Source for CounterSource<'_> {
    async fn reserve(&self, amount: u64, tally: &Tally) -> Result<i64, Error> {
        let seq = self.sequence;
        let overflow = || Error::Overflow {
            sequence: seq.name.to_owned(),
            value: amount.into(),
            target: "i64",
            origin: "the number of ids reserved at once".into(),
        };
        let step = i64::try_from(amount).map_err(|_| overflow())?;
        let hi = increment(self.db, seq, step, tally).await?;
        hi.checked_sub(step - 1).ok_or_else(|| Error::Overflow {
            sequence: seq.name.to_owned(),
            value: i128::from(hi) - i128::from(step) + 1,
            target: "i64",
            origin: format!("the counter answered {hi} to $inc: {step}"),
        })
    }
}

/// Adds `step` to the counter (creating it at `step` if missing) and returns the new value.
async fn increment(db: &Database, seq: &Sequence, step: i64, tally: &Tally) -> Result<i64, Error> {
    update(db, seq, "$inc", step, tally).await
}

/// Raises the counter to the largest numeric `_id` of the sequence's collection (never
/// lowers it), and returns its value.
pub(crate) async fn sync(db: &Database, seq: &Sequence, tally: &Tally) -> Result<i64, Error> {
    let collection = db.collection::<BsonDocument>(seq.collection);
    let largest = write::largest_numeric_id(&collection)
        .await
        .map_err(|error| {
            Error::driver(
                seq.name,
                format!("finding the largest _id in `{}`", seq.collection),
                error,
            )
        })?
        .as_ref()
        .and_then(numeric::floor);
    update(db, seq, "$max", largest.unwrap_or(0), tally).await
}

/// Applies `{ operator: { seq: operand } }` to the counter with an upsert, retrying the
/// upsert race, and returns the counter's new value.
async fn update(
    db: &Database,
    seq: &Sequence,
    operator: &str,
    operand: i64,
    tally: &Tally,
) -> Result<i64, Error> {
    let counters = db.collection::<BsonDocument>(seq.counters);
    // An Int32 operand keeps an Int32 counter Int32 (MongoDB widens it itself on
    // overflow), so other tools reading the counter see the type they wrote.
    let operand = i32::try_from(operand).map_or(Bson::Int64(operand), Bson::Int32);
    let mut attempt = 1;
    loop {
        let reply = counters
            .find_one_and_update(
                doc! { "_id": seq.name },
                doc! { operator: { "seq": operand.clone() } },
            )
            .upsert(true)
            .return_document(ReturnDocument::After)
            .await;
        let error = match reply {
            Ok(Some(counter)) => {
                let value = counter.get("seq").cloned().unwrap_or(Bson::Null);
                return numeric::integral(&value).ok_or_else(|| not_numeric(seq, value));
            }
            Ok(None) => None,
            Err(error) => Some(error),
        };
        // `None`: the server answered with no document; else the error's code.
        let code = error.as_ref().map(server_code);
        // `$inc` met a value that is not a number (MongoDB: error 14). A server that
        // answers the upsert with no document may mean the same, or may have lost a race
        // of first use: the counter as stored tells which.
        if matches!(code, None | Some(Some(TYPE_MISMATCH)))
            && let Some(value) = stored_seq(&counters, seq).await?
            && numeric::integral(&value).is_none()
        {
            return Err(not_numeric(seq, value));
        }
        // The upsert race of a counter's first use is retried, as the manual says.
        let retry = matches!(code, None | Some(Some(DUPLICATE_KEY | TYPE_MISMATCH)));
        if !retry || attempt >= UPSERT_ATTEMPTS {
            return Err(match error {
                None => Error::NoCounter {
                    sequence: seq.name.to_owned(),
                    counters: seq.counters.to_owned(),
                    attempts: attempt,
                },
                Some(error) => Error::driver(
                    seq.name,
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

/// The `seq` the counter holds, or `None` if there is no counter or it has no `seq` (which
/// `$inc` creates).
async fn stored_seq(
    counters: &mongodb::Collection<BsonDocument>,
    seq: &Sequence,
) -> Result<Option<Bson>, Error> {
    counters
        .find_one(doc! { "_id": seq.name })
        .selection_criteria(PRIMARY)
        .await
        .map(|counter| counter.and_then(|c| c.get("seq").cloned()))
        .map_err(|error| {
            Error::driver(
                seq.name,
                format!("reading the counter in `{}`", seq.counters),
                error,
            )
        })
}

fn not_numeric(seq: &Sequence, value: Bson) -> Error {
    Error::CounterNotNumeric {
        sequence: seq.name.to_owned(),
        counters: seq.counters.to_owned(),
        value: Box::new(value),
    }
}
