//! What a `#[seq_id(...)]` attribute says about a type: the sequence and how ids are taken.

use std::time::Duration;

use crate::schema::layout::{CounterWriteConcern, Layout};

/// The sequence a [`Document`](crate::Document) type draws its ids from, as declared by
/// `#[seq_id(...)]`.
///
/// ```
/// use seqid::{Document, Model, Strategy};
/// # use serde::Serialize;
///
/// #[derive(Serialize, Document)]
/// #[seq_id("userid", collection = "users")]
/// struct User {
///     #[serde(rename = "_id")]
///     id: i64,
///     name: String,
/// }
///
/// assert_eq!(User::SEQUENCE.name, "userid");
/// assert_eq!(User::SEQUENCE.collection, "users");
/// assert_eq!(User::SEQUENCE.counters, "counters");
/// assert_eq!(User::SEQUENCE.strategy, Strategy::Counters);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Sequence {
    /// The sequence name: the `_id` of its document in the counters collection.
    pub name: &'static str,
    /// The collection the documents are inserted into; for a sequence named at run time
    /// ([`NamedSequence`](crate::action::NamedSequence)), the one given with `.collection(...)`,
    /// else empty (it numbers no documents of seqid's).
    pub collection: &'static str,
    /// The collection holding the sequence's counter (one per scope), laid out as
    /// [`layout`](Sequence::layout) says. The optimistic strategy keeps no counter.
    pub counters: &'static str,
    /// How the counter document is kept: the tutorial's `{ _id: name, seq: last }`, or
    /// another tool's layout (`layout = "..."`), and the step between ids.
    pub layout: Layout,
    /// How ids are taken.
    pub strategy: Strategy,
    /// The write concern of the counter's updates (counters and block strategies).
    pub counter_write_concern: CounterWriteConcern,
    /// The first id (`start = N`, 1 unless given): where a counter that does not exist yet
    /// starts, or, for the optimistic strategy, the first id of a collection without
    /// numeric ids. A counter that exists, made by seqid or another tool, goes on from
    /// its value.
    pub start: i64,
    /// The key of the field the sequence fills, as serialized: `"_id"` for a sequence
    /// declared on the struct, else the field marked `#[seq_id("name", ...)]`.
    pub field: &'static str,
    /// The keys of the scope fields (`scope = ...`), as serialized, in the declared
    /// order: one counter per combination of their values. Empty when the sequence is
    /// not scoped.
    pub scope: &'static [&'static str],
    /// The Rust types of the scope fields, in the order of [`scope`](Sequence::scope), as
    /// the derive reads them (`"i32"`, `"String"`, `"Option<i64>"`; empty where the type does
    /// not say what is stored, for a field serialized by other code): what a scope named at
    /// run time with `.scope_unchecked(...)` is checked against.
    ///
    /// ```
    /// use seqid::{Document, Model};
    ///
    /// #[derive(serde::Serialize, Document)]
    /// #[seq_id(collection = "invoices")]
    /// struct Invoice {
    ///     customer: i32,
    ///     #[seq_id("invoice", scope = "customer")]
    ///     number: i64,
    /// }
    ///
    /// assert_eq!(Invoice::SEQUENCE.scope_types, ["i32"]);
    /// ```
    pub scope_types: &'static [&'static str],
}

impl Sequence {
    /// The name of the counters collection when `counters = "..."` is not given (and the
    /// `layout`'s tool names none of its own).
    pub const DEFAULT_COUNTERS: &'static str = Layout::TUTORIAL.counters;
    /// How long the optimistic loop keeps retrying an insert whose ids other writers take,
    /// when `time_budget_ms` is not given: long enough to ride out a burst of contention,
    /// short enough for a request handler to answer within its own timeout.
    pub const DEFAULT_TIME_BUDGET: Duration = Duration::from_secs(10);
    /// Ids reserved per round trip by the block strategy when `block_size` is not given.
    pub const DEFAULT_BLOCK_SIZE: u32 = 100;
    /// The first id of a sequence when `start` is not given (and the `layout`'s tool counts
    /// from 1).
    pub const DEFAULT_START: i64 = Layout::TUTORIAL.first_id;
}

/// A sequence by what names it: its name, the collection and the field it numbers. Every
/// [`Error`](crate::Error) holds its sequence, and `main` returning an error prints it with
/// `Debug`: the layout, strategy and start are in [`Model::SEQUENCE`](crate::Model)'s
/// fields for whoever needs them.
///
/// ```
/// use seqid::{Document, Model};
/// # use serde::Serialize;
///
/// #[derive(Serialize, Document)]
/// #[seq_id("userid", collection = "users")]
/// struct User {
///     #[serde(rename = "_id")]
///     id: i64,
/// }
///
/// assert_eq!(
///     format!("{:?}", User::SEQUENCE),
///     r#"Sequence { name: "userid", collection: "users", field: "_id", .. }"#,
/// );
/// ```
impl std::fmt::Debug for Sequence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sequence")
            .field("name", &self.name)
            .field("collection", &self.collection)
            .field("field", &self.field)
            .finish_non_exhaustive()
    }
}

/// How a sequence takes its ids. Chosen per type with `strategy = "..."`.
///
/// Every strategy hands out each id once, under concurrency, across processes and next
/// to other writers, and never stores a document twice (see the crate's notes on faults).
/// They differ in order, gaps and cost:
///
/// | | [`Counters`](Strategy::Counters) | [`Optimistic`](Strategy::Optimistic) | [`Block`](Strategy::Block) | [`Gapless`](Strategy::Gapless) |
/// |---|---|---|---|---|
/// | next id | `findAndModify` + `$inc` on `{ _id: name, seq }` (upsert; one counter per scope) | largest numeric id (of the field, in the scope) + 1 | from a block reserved with one `$inc: block_size` | as counters, inside the caller's transaction |
/// | round trips per insert | 2 (the `$inc` shared by tasks waiting together) | 2 (the maximum query shared), + 1 insert per lost race | 1 + 1/`block_size` | 2, plus the transaction's commit |
/// | order | increasing in the order ids are taken, across all writers (but for ids given back by cancelled callers) | each id above every id stored when it was taken | increasing within a process (but for ids given back by cancelled callers), not across processes | increasing in commit order |
/// | gaps | an id whose document is refused, or whose reservation's answer is lost | none, but where an insert failed while a later id was already stored | as counters, plus at most `2 × block_size - 1` per process restart (`block_size - 1` with `prefetch = false`) | none: an aborted transaction takes its id back |
/// | other writers | share the counter (`$inc: 1`, blocks) | may insert explicit ids; stepped over | share the counter | share the counter, in transactions of their own |
/// | transactions | the counter outside the caller's | all in the caller's | the counter outside the caller's | required; one writer at a time per sequence |
///
/// A caller cancelled while it waits for ids costs no id with any strategy: the round
/// trip runs to its end whoever started it, and the ids reserved for the cancelled caller
/// go to the next caller of the [`Sequences`](crate::Sequences) handle (through a bare
/// database, which keeps nothing between calls, a counter's id is then a gap).
///
/// What tasks share (group commit, blocks, optimistic candidates) lives in a
/// [`Sequences`](crate::Sequences) handle; through a bare `mongodb::Database` each call
/// works alone (see [`AsDatabase`](crate::AsDatabase)).
///
/// ```
/// use seqid::{Document, Model, Strategy};
/// # use serde::Serialize;
///
/// #[derive(Serialize, Document)]
/// #[seq_id("orderid", strategy = "block", block_size = 50)]
/// struct Order {
///     #[serde(rename = "_id")]
///     id: Option<u32>,
/// }
///
/// assert!(matches!(Order::SEQUENCE.strategy, Strategy::Block { block_size: 50, .. }));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Strategy {
    /// `findAndModify` with `$inc` on the counters document, one id per insert (the default).
    Counters,
    /// The largest numeric id in the collection (in the document's scope) plus one,
    /// retried on a duplicate key on the sequence's unique index (`_id`'s, or the one
    /// [`create_indexes`](crate::Document::create_indexes) makes).
    #[non_exhaustive]
    Optimistic {
        /// How many inserts are tried at most before
        /// [`ErrorKind::RetriesExhausted`](crate::Error), if bounded by a count
        /// (`max_attempts`); by default only the time bounds the loop.
        max_attempts: Option<u32>,
        /// How long the loop keeps retrying before
        /// [`ErrorKind::RetriesExhausted`](crate::Error) (`time_budget_ms`,
        /// [`Sequence::DEFAULT_TIME_BUDGET`] by default).
        time_budget: Duration,
    },
    /// Blocks of `block_size` ids reserved with one `$inc` and handed out in memory to the
    /// tasks sharing a [`Sequences`](crate::Sequences) handle.
    #[non_exhaustive]
    Block {
        /// How many ids one round trip to the counters document reserves.
        block_size: u32,
        /// Whether a `Sequences` handle reserves the next block once less than half of the
        /// live one is left, so that no caller waits for it (`prefetch`, on by default):
        /// a process then holds up to two blocks less one when it ends, where it would
        /// hold up to one less one without.
        prefetch: bool,
    },
    /// `findAndModify` with `$inc` on the counters document inside the caller's
    /// transaction: an aborted transaction takes its id back, so committed ids have no gap.
    Gapless,
}

impl Sequence {
    /// The name of the strategy as written in the attribute.
    ///
    /// ```
    /// # use seqid::{Document, Model, Strategy};
    /// # use serde::Serialize;
    /// #[derive(Serialize, Document)]
    /// #[seq_id("ticket", strategy = "optimistic")]
    /// struct Ticket { _id: i64 }
    ///
    /// assert_eq!(Ticket::SEQUENCE.strategy_name(), "optimistic");
    /// ```
    pub const fn strategy_name(&self) -> &'static str {
        match self.strategy {
            Strategy::Counters => "counters",
            Strategy::Optimistic { .. } => "optimistic",
            Strategy::Block { .. } => "block",
            Strategy::Gapless => "gapless",
        }
    }
}

/// Constructors for the derive (through `__private`): the types above are
/// `#[non_exhaustive]`.
pub(crate) mod construct {
    use super::{CounterWriteConcern, Layout, Sequence, Strategy};

    /// The sequence of every attribute's defaults, named `""` in the collection `""`: the
    /// derive's expansion, the checks and the tests copy it and assign the fields they
    /// declare, since a [`Sequence`] cannot be built with a struct literal outside this
    /// crate, and a constructor would have to list every field again. A field added to
    /// [`Sequence`] takes its default here, and its value in the derive's `tokens::sequence`,
    /// which no compiler error asks for.
    pub const BLANK: Sequence = Sequence {
        name: "",
        collection: "",
        counters: Sequence::DEFAULT_COUNTERS,
        layout: Layout::TUTORIAL,
        strategy: Strategy::Counters,
        counter_write_concern: CounterWriteConcern::Majority,
        start: Sequence::DEFAULT_START,
        field: "_id",
        scope: &[],
        scope_types: &[],
    };

    /// [`Strategy::Counters`].
    pub const fn counters() -> Strategy {
        Strategy::Counters
    }

    /// [`Strategy::Optimistic`] with `max_attempts`, and a time budget of
    /// `time_budget_ms` milliseconds ([`Sequence::DEFAULT_TIME_BUDGET`](Sequence::DEFAULT_TIME_BUDGET) if `None`).
    pub const fn optimistic(max_attempts: Option<u32>, time_budget_ms: Option<u32>) -> Strategy {
        let time_budget = match time_budget_ms {
            Some(ms) => super::Duration::from_millis(ms as u64),
            None => Sequence::DEFAULT_TIME_BUDGET,
        };
        Strategy::Optimistic {
            max_attempts,
            time_budget,
        }
    }

    /// [`Strategy::Block`] with `block_size`, the next block reserved early if `prefetch`.
    pub const fn block(block_size: u32, prefetch: bool) -> Strategy {
        Strategy::Block {
            block_size,
            prefetch,
        }
    }

    /// [`Strategy::Gapless`].
    pub const fn gapless() -> Strategy {
        Strategy::Gapless
    }
}

/// Sequences for the unit tests, declared as the derive would.
#[cfg(test)]
pub(crate) mod testing {
    use super::construct::{BLANK, counters};
    use super::{Sequence, Strategy};

    /// A sequence `name` on `_id` of the collection `collection`, with `strategy`.
    pub(crate) const fn on_id(
        name: &'static str,
        collection: &'static str,
        strategy: Strategy,
    ) -> Sequence {
        on_field(name, collection, strategy, "_id", &[])
    }

    /// A sequence `name` on `field` of `collection`, counting per `scope` (fields whose
    /// Rust type is unsaid).
    pub(crate) const fn on_field(
        name: &'static str,
        collection: &'static str,
        strategy: Strategy,
        field: &'static str,
        scope: &'static [&'static str],
    ) -> Sequence {
        typed(name, collection, strategy, field, scope, &[])
    }

    /// [`on_field`], its scope fields of the Rust types `scope_types`.
    pub(crate) const fn typed(
        name: &'static str,
        collection: &'static str,
        strategy: Strategy,
        field: &'static str,
        scope: &'static [&'static str],
        scope_types: &'static [&'static str],
    ) -> Sequence {
        let mut sequence = BLANK;
        sequence.name = name;
        sequence.collection = collection;
        sequence.strategy = strategy;
        sequence.field = field;
        sequence.scope = scope;
        sequence.scope_types = scope_types;
        sequence
    }

    /// A counters sequence `name` on `_id` of `collection`.
    pub(crate) const fn counted(name: &'static str, collection: &'static str) -> Sequence {
        on_id(name, collection, counters())
    }
}
