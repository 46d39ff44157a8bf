//! Administration of a sequence's counter: read it without taking an id, set it, reset
//! it to the start. [`SetCounter`] is the action `set_counter` and `reset_counter` return.

use std::future::IntoFuture;

use crate::action::BoxFuture;
use crate::counted::counter;
use crate::largest::{self, Ids};
use crate::sequences::Route;
use crate::{CounterBacked, Error, Sequence, numeric};

/// Sets a sequence's counter, from [`CounterBacked::set_counter`] or
/// [`CounterBacked::reset_counter`]: await it for the value set.
///
/// It refuses to move the counter below the largest numeric `_id` already stored
/// ([`Error::CounterBelowStored`]): the next ids would be taken already, and every insert
/// would fail on the `_id` index until the counter passed them again. Call
/// [`below_stored`](SetCounter::below_stored) to do it all the same.
///
/// What this process holds is discarded: the live block of a [`Sequences`](crate::Sequences)
/// handle (block strategy) is dropped, so the next id comes from the new value. Other
/// processes' blocks are not: they go on handing out the ids they reserved, which, below
/// the new value, the counter will hand out again; the `_id` index refuses the second
/// document ([`Error::DuplicateKey`]), never stores it. Set a counter while nothing else
/// writes the sequence: no other process, and no insert of this one (a reservation in
/// flight when the counter is set lands under the old value).
#[must_use = "setting a counter does nothing until it is awaited"]
pub struct SetCounter<'a, T: CounterBacked> {
    db: Route<'a>,
    value: Value,
    below_stored: bool,
    _type: std::marker::PhantomData<fn() -> T>,
}

#[derive(Clone, Copy)]
enum Value {
    /// The last id handed out, as given.
    Last(i64),
    /// The start: the next id is the sequence's `start`.
    Start,
}

impl<'a, T: CounterBacked> SetCounter<'a, T> {
    pub(crate) fn to(db: Route<'a>, last: i64) -> Self {
        Self::new(db, Value::Last(last))
    }

    pub(crate) fn to_start(db: Route<'a>) -> Self {
        Self::new(db, Value::Start)
    }

    fn new(db: Route<'a>, value: Value) -> Self {
        SetCounter {
            db,
            value,
            below_stored: false,
            _type: std::marker::PhantomData,
        }
    }

    /// Sets the counter even below the largest id stored: the ids between are taken, and
    /// inserts fail with [`Error::DuplicateKey`] until the counter passes them.
    ///
    /// ```no_run
    /// # use seqid::{CounterBacked, Document};
    /// # #[derive(serde::Serialize, Document)]
    /// # #[seq_id("userid", collection = "users")]
    /// # struct User { #[serde(rename = "_id")] id: i64 }
    /// # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
    /// // The collection was emptied by hand, and numbering starts over.
    /// User::reset_counter(&db).below_stored().await?;
    /// # Ok(()) }
    /// ```
    pub fn below_stored(mut self) -> Self {
        self.below_stored = true;
        self
    }
}

impl<'a, T: CounterBacked> IntoFuture for SetCounter<'a, T> {
    type Output = Result<i64, Error>;
    type IntoFuture = BoxFuture<'a, Self::Output>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(async move {
            let seq = T::SEQUENCE;
            let last = match self.value {
                Value::Last(last) => last,
                Value::Start => seq.start - 1,
            };
            if last < 0 {
                return Err(Error::InvalidOption {
                    sequence: seq.name.to_owned(),
                    option: "set_counter",
                    value: last.to_string(),
                    reason: "the counter holds the last id handed out, and ids start at 1",
                });
            }
            if !self.below_stored {
                refuse_below_stored(self.db, &seq, last).await?;
            }
            counter::set(self.db.db, &seq, last).await?;
            // This process's block was reserved under the old value: dropped.
            if let Some(sequences) = self.db.sequences {
                sequences.counter(self.db.db.name(), &seq).discard();
            }
            Ok(last)
        })
    }
}

async fn refuse_below_stored(db: Route<'_>, seq: &Sequence, last: i64) -> Result<(), Error> {
    let collection = db.db.collection(seq.collection);
    let (top, _) = largest::numeric_id(&collection, seq, Ids::Mixed, None).await?;
    match top.as_ref().and_then(numeric::floor) {
        Some(largest) if largest > last => Err(Error::CounterBelowStored {
            sequence: seq.name.to_owned(),
            collection: seq.collection.to_owned(),
            value: last,
            largest,
        }),
        _ => Ok(()),
    }
}

/// The counter's value (the last id handed out, or reserved by a block), or `None`.
pub(crate) async fn peek<T: CounterBacked>(db: Route<'_>) -> Result<Option<i64>, Error> {
    counter::read(db.db, &T::SEQUENCE).await
}
