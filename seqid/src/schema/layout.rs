//! A sequence's counter: how its document is kept ([`Layout`]: the fields that find it, the
//! field that holds its value and what that value means, the step between ids) and how its
//! writes are acknowledged ([`CounterWriteConcern`]). The MongoDB tutorial's layout is
//! seqid's own; the others are those of the tools whose counters seqid shares
//! (`layout = "..."`), so that a service written with MongoEngine, mongoose or Go and one
//! written with seqid number the same collection from the same counter.

/// Where a scoped sequence's scope goes in its counter document.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
#[doc(hidden)]
pub enum ScopeEncoding {
    /// The layout has no scope: a scoped sequence does not compile with it.
    Unscoped,
    /// In the `_id`: `'["<name>",<value>,...]'`, with `sequence` and `scope` fields for
    /// people and other tools (seqid's own encoding, see the crate's notes on scopes).
    InId,
    /// In this field, as a document of the scope fields in the order JavaScript sorts
    /// their names, and `null` for an unscoped sequence: mongoose-sequence's
    /// `reference_value`.
    InField(&'static str),
}

/// What the value of a counter is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
#[doc(hidden)]
pub enum CounterValue {
    /// The last id handed out (the tutorial and every tool seqid has a preset for).
    Last,
    /// The next id to hand out.
    Next,
}

/// The width a counter's value is written with when seqid creates or sets it. `$inc`
/// keeps the width the counter has (MongoDB widens an Int32 on overflow by itself).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
#[doc(hidden)]
pub enum Width {
    /// Int32 when the value fits, else Int64: what the tutorial's shell, pymongo and
    /// Node.js write.
    Narrowest,
    /// Int64 always (@typegoose/auto-increment's `count` is a `BigInt`).
    Int64,
}

/// How a sequence's counter document is laid out, declared with `layout = "..."` (a
/// tool's preset) or the explicit keys `counter_name`, `counter_field`, `counter_value`,
/// `counter_holds`, and `step`. Every strategy that keeps a counter works on every layout;
/// the derive refuses what a layout cannot hold (a scope where the tool has none, a step
/// where the tool always adds 1).
///
/// | `layout` | counters collection | the counter is found by | value | first id |
/// |---|---|---|---|---|
/// | `"tutorial"` (the default) | `counters` | `_id: "<name>"` | `seq`, the last id | 1 |
/// | `"mongoengine"` | `mongoengine.counters` | `_id: "<name>"` (`"<collection>.<field>"`) | `next`, the last id (always + 1) | 1 |
/// | `"mongoose-sequence"` | `counters` | `id: "<name>"`, `reference_value`: the scope or `null` | `seq`, the last id | 1 |
/// | `"mongoose-auto-increment"` | `identitycounters` | `model: "<name>"`, `field: "<field>"` | `count`, the last id | 0 |
/// | `"typegoose"` | `identitycounters` | `modelName: "<name>"`, `field: "<field>"` | `count` (Int64), the last id | 0 |
/// | `"go"` | `counters` | `_id: "<name>"` | `sequence`, the last id (always + 1) | 1 |
///
/// ```
/// use seqid::layout::Layout;
/// use seqid::{Document, Model};
/// # use serde::Serialize;
///
/// #[derive(Serialize, Document)]
/// #[seq_id("Book", collection = "books", layout = "mongoose-auto-increment")]
/// struct Book {
///     #[serde(rename = "_id")]
///     id: Option<i64>,
/// }
///
/// let layout = Book::SEQUENCE.layout;
/// assert_eq!(layout, Layout::MONGOOSE_AUTO_INCREMENT);
/// assert_eq!((layout.name_key, layout.field_key), ("model", Some("field")));
/// assert_eq!((layout.value_key, layout.step), ("count", 1));
/// assert_eq!((layout.counters, layout.first_id), ("identitycounters", 0));
/// assert_eq!(Book::SEQUENCE.counters, "identitycounters");
/// assert_eq!(Book::SEQUENCE.start, 0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Layout {
    /// The tool whose layout this is, for messages: `"the MongoDB tutorial"`, ...
    pub tool: &'static str,
    /// The counter's field that holds the sequence name: `_id`, or a field of a counter
    /// whose `_id` is an ObjectId.
    pub name_key: &'static str,
    /// A counter field that holds the key of the field the sequence numbers (the
    /// mongoose plugins' `field`), if the layout has one.
    pub field_key: Option<&'static str>,
    /// Where a scope goes.
    #[doc(hidden)]
    pub scope: ScopeEncoding,
    /// The counter's field that holds its value.
    pub value_key: &'static str,
    /// What the value is: the last id handed out, or the next.
    #[doc(hidden)]
    pub holds: CounterValue,
    /// How far apart two ids are (`step = N`, a tool's `inc_amount` or `incrementBy`):
    /// the ids are `start`, `start + step`, `start + 2 × step`, ...
    pub step: i64,
    /// How a value seqid writes is typed.
    #[doc(hidden)]
    pub width: Width,
    /// Fields a counter is created with besides those that find it and its value, and
    /// their values (mongoose-auto-increment's `__v: 0`).
    pub created_with: &'static [(&'static str, i32)],
    /// The keys of the unique index that makes a counter found by fields (not by `_id`)
    /// one document, in the tool's order, so that the index seqid makes is the tool's.
    pub unique_index: &'static [&'static str],
    /// The counters collection the tool keeps its counters in unless told otherwise (a
    /// sequence's `counters`, when not given).
    pub counters: &'static str,
    /// The first id the tool hands out unless told otherwise (its `startAt`, `start_seq`):
    /// a sequence's `start`, when not given.
    pub first_id: i64,
    /// Whether the tool always adds 1 to its counter, so that ids a step apart would not
    /// be its ids: such a layout takes no `step`.
    pub adds_one: bool,
}

impl Layout {
    /// The MongoDB tutorial's `{ _id: "<name>", seq: <last id> }` in `counters`,
    /// seqid's own. A scope is kept in the `_id` (see the crate's notes on scopes).
    pub const TUTORIAL: Layout = Layout {
        tool: "the MongoDB tutorial",
        name_key: "_id",
        field_key: None,
        scope: ScopeEncoding::InId,
        value_key: "seq",
        holds: CounterValue::Last,
        step: 1,
        width: Width::Narrowest,
        created_with: &[],
        unique_index: &[],
        counters: "counters",
        first_id: 1,
        adds_one: false,
    };

    /// MongoEngine's `SequenceField`: `{ _id: "<collection>.<field>", next: <last id> }`
    /// in `mongoengine.counters`; no scope, no step.
    pub const MONGOENGINE: Layout = Layout {
        tool: "MongoEngine's SequenceField",
        value_key: "next",
        scope: ScopeEncoding::Unscoped,
        counters: "mongoengine.counters",
        adds_one: true,
        ..Layout::TUTORIAL
    };

    /// mongoose-sequence: `{ _id: ObjectId, id: "<name>", reference_value: <scope or
    /// null>, seq: <last id> }` in `counters`, unique on `{ id, reference_value }`.
    pub const MONGOOSE_SEQUENCE: Layout = Layout {
        tool: "mongoose-sequence",
        name_key: "id",
        scope: ScopeEncoding::InField("reference_value"),
        unique_index: &["id", "reference_value"],
        ..Layout::TUTORIAL
    };

    /// mongoose-auto-increment: `{ _id: ObjectId, model: "<name>", field: "<field>",
    /// count: <last id>, __v: 0 }` in `identitycounters`, unique on `{ field, model }`;
    /// no scope.
    pub const MONGOOSE_AUTO_INCREMENT: Layout = Layout {
        tool: "mongoose-auto-increment",
        name_key: "model",
        field_key: Some("field"),
        scope: ScopeEncoding::Unscoped,
        value_key: "count",
        created_with: &[("__v", 0)],
        unique_index: &["field", "model"],
        counters: "identitycounters",
        first_id: 0,
        ..Layout::TUTORIAL
    };

    /// @typegoose/auto-increment's `AutoIncrementID`: `{ _id: ObjectId, modelName:
    /// "<name>", field: "<field>", count: <last id, Int64> }` in `identitycounters`,
    /// unique on `{ field, modelName }`; no scope.
    pub const TYPEGOOSE: Layout = Layout {
        tool: "@typegoose/auto-increment",
        name_key: "modelName",
        field_key: Some("field"),
        scope: ScopeEncoding::Unscoped,
        value_key: "count",
        width: Width::Int64,
        unique_index: &["field", "modelName"],
        counters: "identitycounters",
        first_id: 0,
        ..Layout::TUTORIAL
    };

    /// The Go blog post's `{ _id: "<name>", sequence: <last id> }`; no scope.
    pub const GO: Layout = Layout {
        tool: "the Go blog post",
        value_key: "sequence",
        scope: ScopeEncoding::Unscoped,
        adds_one: true,
        ..Layout::TUTORIAL
    };

    /// Whether the counter is found by its `_id` (else by fields, with an ObjectId `_id`).
    pub const fn by_id(&self) -> bool {
        matches!(self.name_key.as_bytes(), b"_id")
    }

    /// How much more than the last id handed out the value is: 0 or `step`.
    pub const fn offset(&self) -> i64 {
        match self.holds {
            CounterValue::Last => 0,
            CounterValue::Next => self.step,
        }
    }
}

/// The write concern seqid gives the counter's `$inc`, declared with
/// `counter_write_concern = "..."`. The document's own insert always goes with the
/// collection's write concern.
///
/// An `$inc` acknowledged by the primary alone (`w: 1`) can be rolled back by a failover:
/// the new primary never saw it, and hands the same ids out again, to this process (whose
/// documents then meet the `_id` index: `DuplicateKey`) and to others. The block strategy
/// is the most exposed, since a process goes on handing out a whole block another process
/// is given again. So the counter waits for a majority unless the type says otherwise.
///
/// ```
/// use seqid::layout::CounterWriteConcern;
/// use seqid::{Document, Model};
/// # use serde::Serialize;
///
/// #[derive(Serialize, Document)]
/// #[seq_id("userid")]
/// struct User { _id: i64 }
///
/// assert_eq!(User::SEQUENCE.counter_write_concern, CounterWriteConcern::Majority);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CounterWriteConcern {
    /// `w: "majority"` (the default): an id, once handed out, survives a failover. The
    /// database's `journal` and `wtimeout` are kept.
    #[default]
    Majority,
    /// The database's (or the client's) own write concern, e.g. `w: 1` for speed where a
    /// failover may hand ids out again (`counter_write_concern = "database"`).
    Database,
}

/// How the tool of `layout` names a counter by default, for the message of a counter that
/// is missing while numbers are stored ([`ErrorKind::CounterMissing`](crate::Error)): the
/// defaults people guess wrong.
pub(crate) fn naming_hint(layout: &Layout) -> &'static str {
    match layout.tool {
        tool if tool == Layout::MONGOENGINE.tool => {
            "MongoEngine names its counter `<collection>.<field>` in `mongoengine.counters`, \
             the collection being the class name in snake_case (`class Customer` gives \
             `customer.id`, `class CustomerAccount` `customer_account.id`) unless `meta` \
             names it, and the field's `sequence_name` or `collection_name` replacing either"
        }
        tool if tool == Layout::MONGOOSE_SEQUENCE.tool => {
            "mongoose-sequence finds its counter by the plugin's `id` option (its `inc_field` \
             when not given) and `reference_value`"
        }
        tool if tool == Layout::MONGOOSE_AUTO_INCREMENT.tool => {
            "mongoose-auto-increment finds its counter by the plugin's `model` option and \
             `field` (`_id` when not given), in `identitycounters`"
        }
        tool if tool == Layout::TYPEGOOSE.tool => {
            "@typegoose/auto-increment finds its counter by `modelName`, the model's name \
             (the class name unless `customName` says otherwise), and `field`, in \
             `identitycounters`"
        }
        _ => {
            "seqid names a counter by the sequence's name, the first argument of \
             `#[seq_id]`: a renamed sequence leaves its counter under the old name"
        }
    }
}

/// Constructors for the derive (through `__private`): [`Layout`] is `#[non_exhaustive]`.
pub(crate) mod construct {
    use super::{CounterValue, Layout, ScopeEncoding};

    /// `layout` with ids `step` apart.
    pub const fn stepped(layout: Layout, step: u32) -> Layout {
        Layout {
            step: step as i64,
            ..layout
        }
    }

    /// A layout given key by key (`counter_name`, `counter_field`, `counter_value`,
    /// `counter_holds`): found by `_id`, or by fields with a unique index on them.
    pub const fn custom(
        name_key: &'static str,
        field_key: Option<&'static str>,
        value_key: &'static str,
        holds_next: bool,
        unique_index: &'static [&'static str],
    ) -> Layout {
        Layout {
            tool: "the layout declared",
            name_key,
            field_key,
            scope: match name_key.as_bytes() {
                b"_id" => ScopeEncoding::InId,
                _ => ScopeEncoding::Unscoped,
            },
            value_key,
            holds: if holds_next {
                CounterValue::Next
            } else {
                CounterValue::Last
            },
            unique_index,
            ..Layout::TUTORIAL
        }
    }
}
