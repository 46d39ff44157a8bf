//! The guide: what seqid does, what it costs and what it guarantees, chapter by chapter.
//!
//! Nothing here is code: each chapter is a module of documentation only, and its examples
//! are compiled as doc tests (`no_run` where they would need a server). The crate's
//! [front page](crate) has the first example and the strategies in one table; the
//! [`Document`](crate::Document) trait and the [derive](macro@crate::Document) have the
//! reference of every operation and attribute.
//!
//! # Using seqid
//!
//! - [`strategies`]: the four strategies in detail: where each id comes from, round trips,
//!   order, gaps, other writers, transactions; which to choose.
//! - [`sharing`]: one [`Sequences`](crate::Sequences) handle per deployment, what it shares
//!   between tasks, what a bare `mongodb::Database` costs, and the memory it keeps.
//! - [`transactions`]: sessions and transactions per strategy, and the counter's write
//!   concern.
//! - [`scopes`]: a sequence on any field, numbered per scope (tickets per project), and the
//!   unique index it relies on.
//! - [`several_sequences`]: several sequences in one document (a global id and a number per
//!   repository).
//! - [`display_codes`]: `INV-2026-0042`, written with the number, never twice.
//! - [`find_or_insert`]: the document with a natural key, inserted with the next id only
//!   when no document holds the key; the races spelled out, per strategy.
//! - [`numbering_later`]: drafts stored without a number, numbered when they are issued;
//!   one at a time or in bulk, in order; the races spelled out.
//! - [`items`]: items numbered inside their document (an order's lines 1, 2, 3): at insert
//!   with no round trip more, and appended later in one round trip; the races, the gaps, lost
//!   answers.
//! - [`numbers`]: numbers on their own, with no document (`db.sequence("userid").next()`,
//!   the tutorial's `getNextSequence`): what each costs per strategy, the races, the gaps.
//! - [`other_tools`]: sharing a counter with MongoEngine, mongoose plugins, typegoose or the
//!   Go blog post, a layout by hand, and moving a sequence from a tool to seqid without a
//!   pause.
//! - [`data_layout`]: what the counters and the documents look like in the database.
//! - [`attributes`]: the attribute reference, `#[seq_id(...)]` and `#[seq_display(...)]`,
//!   the id field, serde attributes.
//! - [`operations`]: every operation (insert, resume, find, the counter's administration,
//!   indexes, stats) and logging.
//! - [`errors`]: the error type and what each variant says.
//! - [`service`]: the example service (axum), and what it shows about timeouts and hang-ups.
//! - [`testing`]: testing your app: a server for your program in one command
//!   (`seqid-server`), a throwaway database or server for each of your integration tests, and
//!   what is installed where.
//!
//! # What holds, and where it stops
//!
//! - [`guarantees`]: faults and lost answers: no path stores a document twice, an
//!   acknowledged insert is yours, gaps, and the risk that remains.
//! - [`cancellation`]: dropped futures: what a cancelled call leaves behind, and why this
//!   matters with the driver alone.
//! - [`sharded_clusters`]: past one replica set: what holds on a sharded cluster, what is
//!   refused before any id is taken, what it costs, and the check a deploy script runs.
//! - [`limits`]: limits worth knowing.
//! - [`migration`]: migration notes for code written against earlier versions.
//!
//! # Working on seqid
//!
//! - [`architecture`]: the map of the crate (its layers are its folders) and the glossary of
//!   the words its code coins.
//! - [`test_server`]: the repository's commands, the servers its tests run on (and where
//!   they differ from MongoDB), the tools they share counters with, the repository's
//!   layout.
//! - [`benchmarks`]: what the benchmark measures and how to run it; the figures are in the
//!   repository's `BENCHMARKS.md`.

pub mod architecture;
pub mod attributes;
pub mod benchmarks;
pub mod cancellation;
pub mod data_layout;
pub mod display_codes;
pub mod errors;
pub mod find_or_insert;
pub mod guarantees;
pub mod items;
pub mod limits;
pub mod migration;
pub mod numbering_later;
pub mod numbers;
pub mod operations;
pub mod other_tools;
pub mod scopes;
pub mod service;
pub mod several_sequences;
pub mod sharded_clusters;
pub mod sharing;
pub mod strategies;
pub mod test_server;
pub mod testing;
pub mod transactions;
