//! The models the scenarios write, shared by the tests and the worker processes they start
//! (`tests/bin/worker.rs`).
//!
//! A scenario is written once, generic over [`Model`], and run with both kinds of
//! documents:
//!
//! - **unique** documents `{ _id, writer, n, wide }`: each holds its writer and its place
//!   `n` in the writer's run, so a copy stored twice, or stored under another document's
//!   id, shows; and a caller may resume with `content_is_unique`, since equal content is
//!   its own. (`wide` is an Int64 beyond Int32, so that contents are compared by value.)
//! - **equal** documents `{ _id, writer }`: all equal but for the id within a writer (and,
//!   for a scoped model, within a project). A writer is a group of callers whose documents
//!   are identical: the tasks of one process, of several processes, or the MongoDB
//!   tutorial's loop written by hand. Nothing in a document tells one caller's from
//!   another's, so a caller may only be told "stored under id N" when the server
//!   acknowledged its own write.
//!
//! Every model here has a [`Model::NAME`], by which a worker process is told what to write.

use std::future::Future;
use std::pin::Pin;

use seqid::Document;
use serde::de::DeserializeOwned;

/// The document a finder found.
pub type Found<'a, T> = Pin<Box<dyn Future<Output = Option<T>> + Send + 'a>>;

/// A model a scenario writes: its `n`-th document of writer `writer`.
pub trait Model:
    Document + DeserializeOwned + Clone + PartialEq + std::fmt::Debug + Send + Sync + 'static
{
    /// The name a worker process knows it by (see `writers::write_model`).
    const NAME: &'static str;

    /// Whether every document is different (`{ writer, n }` in it), or the documents of a
    /// writer are all equal (in a scope).
    const UNIQUE: bool;

    /// The `n`-th document of writer `writer`; for a scoped model, in project
    /// [`project_of(n)`](project_of).
    fn make(writer: &str, n: u32) -> Self;

    /// The document whose display field `DISPLAYS[index]` holds `code`, found by the
    /// `find_by_<field>` function the derive wrote for that field. A model with display
    /// fields implements it; the others have none to look in.
    fn find_by_code<'a>(db: &'a mongodb::Database, index: usize, code: &'a str) -> Found<'a, Self> {
        let _ = (db, index, code);
        Box::pin(async { None })
    }
}

/// How many projects the scoped models spread their documents over: the `n`-th document
/// of a writer goes to project `p{n % PROJECTS}`.
pub const PROJECTS: u32 = 4;

/// The project of a writer's `n`-th scoped document.
pub fn project_of(n: u32) -> String {
    format!("p{}", n % PROJECTS)
}

/// An Int64 beyond Int32, in every unique document.
pub const WIDE: i64 = 1 << 40;

/// `unique_model!(Name = "name", "sequence", key = value, ...)` declares a unique model
/// `{ _id: i64, writer, n, wide }` with that `#[seq_id(...)]` (where [`Model`] and
/// [`WIDE`] are in scope).
macro_rules! unique_model {
    ($(#[$doc:meta])* $name:ident = $model:literal, $($attr:tt)*) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, seqid::Document)]
        #[seq_id($($attr)*)]
        pub struct $name {
            #[serde(rename = "_id")]
            pub id: i64,
            pub writer: String,
            pub n: u32,
            pub wide: i64,
        }

        impl Model for $name {
            const NAME: &'static str = $model;
            const UNIQUE: bool = true;

            fn make(writer: &str, n: u32) -> Self {
                $name { id: 0, writer: writer.to_owned(), n, wide: WIDE }
            }
        }
    };
}

/// `scoped_unique_model!(Name = "name", collection, seq_id(...))` declares a unique model
/// numbered per project in a field, beside the ObjectId `_id` the driver gives it (where
/// [`Model`], [`WIDE`] and [`project_of`] are in scope).
macro_rules! scoped_unique_model {
    ($(#[$doc:meta])* $name:ident = $model:literal, $collection:literal, $($attr:tt)*) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, seqid::Document)]
        #[seq_id(collection = $collection)]
        pub struct $name {
            #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
            pub id: Option<mongodb::bson::oid::ObjectId>,
            pub project: String,
            #[seq_id($($attr)*)]
            pub number: i64,
            #[seq_display("{project}#{number:04}")]
            pub code: String,
            pub writer: String,
            pub n: u32,
            pub wide: i64,
        }

        impl Model for $name {
            const NAME: &'static str = $model;
            const UNIQUE: bool = true;

            fn make(writer: &str, n: u32) -> Self {
                $name {
                    id: None,
                    project: project_of(n),
                    number: 0,
                    code: String::new(),
                    writer: writer.to_owned(),
                    n,
                    wide: WIDE,
                }
            }

            fn find_by_code<'a>(
                db: &'a mongodb::Database,
                _: usize,
                code: &'a str,
            ) -> ::std::pin::Pin<
                Box<dyn ::std::future::Future<Output = Option<Self>> + Send + 'a>,
            > {
                Box::pin(async move { $name::find_by_code(db, code).await.unwrap() })
            }
        }
    };
}

/// `equal_model!(Name = "name", "sequence", key = value, ...)` declares an equal model
/// `{ _id: i64, writer }`.
macro_rules! equal_model {
    ($(#[$doc:meta])* $name:ident = $model:literal, $($attr:tt)*) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, seqid::Document)]
        #[seq_id($($attr)*)]
        pub struct $name {
            #[serde(rename = "_id")]
            pub id: i64,
            pub writer: String,
        }

        impl Model for $name {
            const NAME: &'static str = $model;
            const UNIQUE: bool = false;

            fn make(writer: &str, _: u32) -> Self {
                $name { id: 0, writer: writer.to_owned() }
            }
        }
    };
}

/// `scoped_equal_model!(Name = "name", seq_id(...))` declares an equal model numbered per
/// project, in the collection `scoped_equal`.
macro_rules! scoped_equal_model {
    ($name:ident = $model:literal, $($attr:tt)*) => {
        // No `_id` field: the server gives each document one, which the caller never
        // sees. An `Option<ObjectId>` `_id` would be filled by seqid and make every
        // document unique (see `object_ids.rs`), which these models must not be.
        #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, seqid::Document)]
        #[seq_id(collection = "scoped_equal")]
        pub struct $name {
            pub project: String,
            #[seq_id($($attr)*)]
            pub number: i64,
            #[seq_display("{project}/{number}")]
            pub code: String,
            pub writer: String,
        }

        impl Model for $name {
            const NAME: &'static str = $model;
            const UNIQUE: bool = false;

            fn make(writer: &str, n: u32) -> Self {
                $name {
                    project: project_of(n),
                    number: 0,
                    code: String::new(),
                    writer: writer.to_owned(),
                }
            }

            fn find_by_code<'a>(
                db: &'a mongodb::Database,
                _: usize,
                code: &'a str,
            ) -> ::std::pin::Pin<
                Box<dyn ::std::future::Future<Output = Option<Self>> + Send + 'a>,
            > {
                Box::pin(async move { $name::find_by_code(db, code).await.unwrap() })
            }
        }
    };
}

unique_model!(
    /// The counters strategy, written by several processes at once.
    CountedDoc = "counters",
    "multi_counters",
    collection = "multi_counters"
);
unique_model!(
    /// The optimistic loop, written by several processes at once (48 writers in three
    /// processes, on two loaded cores in CI: a minute's budget, as for every optimistic
    /// stress model; the default of 10 s is the benchmark's to measure).
    OptimisticDoc = "optimistic",
    "multi_optimistic",
    collection = "multi_optimistic",
    strategy = "optimistic",
    time_budget_ms = 60000
);
unique_model!(
    /// Blocks of 10 ids, written by several processes at once.
    BlockDoc = "block",
    "multi_block",
    collection = "multi_block",
    strategy = "block",
    block_size = 10
);
unique_model!(
    /// Gapless, each insert in a transaction of its own, by several processes at once.
    GaplessDoc = "gapless",
    "multi_gapless",
    collection = "multi_gapless",
    strategy = "gapless"
);

scoped_unique_model!(
    /// Numbered per project by several processes at once, with the counters strategy.
    ScopedCounted = "scoped-counters",
    "scoped_counters",
    "scoped_counters",
    scope = "project"
);
scoped_unique_model!(
    /// Numbered per project by several processes at once, with blocks of 10.
    ScopedBlock = "scoped-block",
    "scoped_block",
    "scoped_block",
    scope = "project",
    strategy = "block",
    block_size = 10
);
scoped_unique_model!(
    /// Numbered per project by several processes at once, with the optimistic loop (on
    /// the unique index `create_indexes` makes).
    ScopedOptimistic = "scoped-optimistic",
    "scoped_optimistic",
    "scoped_optimistic",
    scope = "project",
    strategy = "optimistic",
    time_budget_ms = 60000
);

equal_model!(
    /// Equal documents, the counters strategy.
    EqualCounted = "equal-counters",
    "equal_counters",
    collection = "equal_counters"
);
equal_model!(
    /// Equal documents, blocks of 10.
    EqualBlock = "equal-block",
    "equal_block",
    collection = "equal_block",
    strategy = "block",
    block_size = 10
);
equal_model!(
    /// `Ticket { id: 0, writer: "seqid" }`, optimistic. Tasks inserting through a bare
    /// database share no candidate (they take turns) and race every other process for
    /// each id: many attempts. A minute's budget, like the unique stress models: the
    /// suite checks that every document is stored once with four tests at a time on two
    /// cores (CI once saw 16 bare tasks beside the tutorial's loop spend the default
    /// 10 s); how long inserts take under contention is the benchmark's to show, never a
    /// timed test's.
    EqualOptimistic = "equal-optimistic",
    "ticket",
    collection = "tickets",
    strategy = "optimistic",
    time_budget_ms = 60000
);
equal_model!(
    /// Equal documents, gapless.
    EqualGapless = "equal-gapless",
    "equal_gapless",
    collection = "equal_gapless",
    strategy = "gapless"
);

scoped_equal_model!(
    ScopedEqualCounted = "scoped-equal-counters",
    "scoped_equal_counters",
    scope = "project"
);
scoped_equal_model!(
    ScopedEqualBlock = "scoped-equal-block",
    "scoped_equal_block",
    scope = "project",
    strategy = "block",
    block_size = 10
);
scoped_equal_model!(
    ScopedEqualOptimistic = "scoped-equal-optimistic",
    "scoped_equal_optimistic",
    scope = "project",
    strategy = "optimistic",
    time_budget_ms = 60000
);

/// A user `{ _id, by }`, the counters strategy: `by` names the caller that stored it (a
/// task, a process, a token's holder), for the feature modules whose scenarios say who
/// stored what (`next`, `reserve`).
#[derive(Debug, serde::Serialize, seqid::Document)]
#[seq_id("users", collection = "users")]
pub struct User {
    #[serde(rename = "_id")]
    pub id: i64,
    pub by: String,
}

/// An event `{ _id }`, blocks of 10, for the same modules, which count the blocks reserved
/// and the ids left exactly: each block reserved when the last is spent (`prefetch = false`;
/// the strategy's default, the next block reserved early, is `block`'s to test, and the
/// shared models', e.g. [`BlockDoc`], in the fault, restart and cancellation suites).
#[derive(Debug, serde::Serialize, seqid::Document)]
#[seq_id(
    "events",
    collection = "events",
    strategy = "block",
    block_size = 10,
    prefetch = false
)]
pub struct Event {
    #[serde(rename = "_id")]
    pub id: i64,
}

/// The issue tracker of issue 26, unique documents: a global `_id` from a counter, and a
/// number per project from blocks of 10 (the other sequence).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, seqid::Document)]
#[seq_id("tracker_id", collection = "trackers")]
pub struct TrackerDoc {
    #[serde(rename = "_id")]
    pub id: i64,
    pub project: String,
    #[seq_id(
        "tracker_number",
        scope = "project",
        strategy = "block",
        block_size = 10
    )]
    pub number: i64,
    /// A code of each sequence (issue 27).
    #[seq_display("{project}-{number:03}")]
    pub code: String,
    #[seq_display("T{id:06}")]
    pub reference: String,
    pub writer: String,
    pub n: u32,
    pub wide: i64,
}

impl Model for TrackerDoc {
    const NAME: &'static str = "tracker";
    const UNIQUE: bool = true;

    fn make(writer: &str, n: u32) -> Self {
        TrackerDoc {
            id: 0,
            project: project_of(n),
            number: 0,
            code: String::new(),
            reference: String::new(),
            writer: writer.to_owned(),
            n,
            wide: WIDE,
        }
    }

    fn find_by_code<'a>(db: &'a mongodb::Database, index: usize, code: &'a str) -> Found<'a, Self> {
        Box::pin(async move {
            match index {
                0 => TrackerDoc::find_by_code(db, code).await.unwrap(),
                _ => TrackerDoc::find_by_reference(db, code).await.unwrap(),
            }
        })
    }
}

/// The issue tracker with equal documents (equal but for the ids within a writer and a
/// project): `_id` from blocks of 10, and a number per project from a counter (the other
/// sequence, dense).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, seqid::Document)]
#[seq_id(
    "equal_tracker_id",
    collection = "equal_trackers",
    strategy = "block",
    block_size = 10
)]
pub struct EqualTracker {
    #[serde(rename = "_id")]
    pub id: i64,
    pub project: String,
    #[seq_id("equal_tracker_number", scope = "project")]
    pub number: i64,
    #[seq_display("{project}#{number}")]
    pub code: String,
    pub writer: String,
}

impl Model for EqualTracker {
    const NAME: &'static str = "equal-tracker";
    const UNIQUE: bool = false;

    fn make(writer: &str, n: u32) -> Self {
        EqualTracker {
            id: 0,
            project: project_of(n),
            number: 0,
            code: String::new(),
            writer: writer.to_owned(),
        }
    }

    fn find_by_code<'a>(db: &'a mongodb::Database, _: usize, code: &'a str) -> Found<'a, Self> {
        Box::pin(async move { EqualTracker::find_by_code(db, code).await.unwrap() })
    }
}
