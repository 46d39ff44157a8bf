//! The counter, one subsystem: its document and commands, the gapless strategy whole
//! ([`gapless`], with its [`commit_queue`] and [`tickets`]), and an id reserved for a
//! document built later ([`reserved`]).
//!
//! The counter document, laid out as the sequence's [`Layout`] says: the tutorial's
//! `{ _id: <sequence>, seq: <last id handed out> }` (for a scope, `_id` names the sequence
//! and the scope's values: see [`scope`](crate::fields::scope)), or another tool's, found by
//! fields. This module addresses a counter ([`Counter`]: its filter, its value and the ids
//! it stands for) and reads it as stored; one job a submodule: [`update`] advances it (one
//! `findAndModify` + `$inc`, as in the MongoDB tutorial, guarded so that a counter holding
//! 1.5, a string or a Double at 2^53 is reported as it is, never moved), [`missing`] is the
//! safety net that makes a counter before its first use, [`gapless`] takes gapless ids
//! in the caller's transaction, and [`admin`] reads, sets, raises and lists counters.
//!
//! A counter found by `_id` is created by the upsert, whose `_id` index makes a race of
//! first uses one counter. A counter found by fields (its `_id` an ObjectId) is created
//! only by an insert after the tool's unique index on those fields is made, since an
//! upsert without it could create two counters for one sequence; its updates do not
//! upsert.

pub(crate) mod admin;
pub(crate) mod commit_queue;
pub(crate) mod gapless;
pub(crate) mod missing;
pub(crate) mod reserved;
pub(crate) mod tickets;
pub(crate) mod update;

use mongodb::bson::{Bson, Document as BsonDocument, doc};
use mongodb::options::{Acknowledgment, WriteConcern};

use crate::base::error::{Doing, Error, ErrorKind};
use crate::base::server::PRIMARY;
use crate::fields::scope::Scope;
use crate::schema::layout::CounterWriteConcern;
use crate::schema::layout::{Layout, ScopeEncoding, Width};
use crate::schema::sequence::Sequence;

/// Upserts that race on a new counter fail with E11000; the manual says a retry cannot
/// fail again absent a delete, so a few attempts are plenty. The same bound holds for a
/// server that answers an upsert with no document.
pub(super) const UPSERT_ATTEMPTS: u32 = 5;
/// The server's TypeMismatch: an update applied to a value of another type.
pub(super) const TYPE_MISMATCH: i32 = 14;

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
        self.checked(i128::from(last) + i128::from(self.layout().offset()))
    }

    /// The last id handed out when the counter holds `value`.
    fn last_of(&self, value: i64) -> Result<i64, Error> {
        self.checked(i128::from(value) - i128::from(self.layout().offset()))
    }

    /// `value` as an `i64`, or the counter's overflow.
    fn checked(&self, value: i128) -> Result<i64, Error> {
        i64::try_from(value).map_err(|_| self.overflow(value))
    }

    fn overflow(&self, value: i128) -> Error {
        let (shown, counters) = (self.shown(), self.seq.counters);
        Error::new(
            self.seq,
            ErrorKind::Overflow {
                value,
                target: "i64",
                origin: format!("the counter {{ {shown} }} in `{counters}`").into(),
            },
        )
    }

    /// [`ErrorKind::CounterContended`], after `attempts` updates conditional on the value read.
    fn contended(&self, attempts: u32) -> Error {
        Error::new(
            self.seq,
            ErrorKind::CounterContended {
                counter: self.shown(),
                attempts,
            },
        )
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
        let last = self.checked(i128::from(seq.start) - i128::from(seq.layout.step))?;
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
        self.checked(last)
    }
}

/// The write concern of an update of the counter outside a transaction: the database's
/// own, with `w: "majority"` unless the type asks for the database's as it is. Its
/// journal and timeout stay: a single server (or a compatible one) may acknowledge a
/// majority write before its journal holds it, and only `journal: true` then survives a
/// crash. `None`: the database's own, inherited.
pub(super) fn counter_write_concern(
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

/// The counter as stored: `None` if there is none, else its value (`None` if it has
/// none).
pub(super) async fn stored(
    counters: &mongodb::Collection<BsonDocument>,
    counter: Counter<'_>,
) -> Result<Option<Option<Bson>>, Error> {
    let seq = counter.seq;
    counters
        .find_one(counter.filter())
        .selection_criteria(PRIMARY)
        .await
        .map(|found| found.map(|c| c.get(counter.value_key()).cloned()))
        .doing(seq, || format!("reading the counter in `{}`", seq.counters))
}

pub(super) fn not_numeric(counter: Counter<'_>, value: Bson) -> Error {
    Error::new(
        counter.seq,
        ErrorKind::CounterNotNumeric {
            counter: counter.shown(),
            value: Box::new(value),
        },
    )
}

/// What is done to the counter's value (its `seq`, in the tutorial's layout), in the
/// units the counter holds.
#[derive(Debug, Clone, Copy)]
pub(super) enum Change {
    /// `$inc`: reserves ids.
    Inc(i64),
    /// `$max`: raises the counter to ids written by other means. Guarded like `$inc`, or
    /// it would silently replace a counter of 1.5 by a larger number, while `$max` against
    /// a string leaves it as it is (numbers sort before strings).
    Max(i64),
}

impl Change {
    pub(super) fn update(self, counter: Counter<'_>) -> BsonDocument {
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
    pub(super) fn reach(self) -> i64 {
        match self {
            Change::Inc(step) => step,
            Change::Max(_) => 0,
        }
    }
}
