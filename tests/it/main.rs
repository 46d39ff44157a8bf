//! seqid's integration tests, against real server processes: one crate, one module per
//! concept. Scenarios are written once, generic over the model (`support::models`), and
//! run with unique documents and with documents all equal but for the id.
//!
//! A local server is started for the crate (see `seqid-harness`); each test works in a
//! database of its own, dropped at its end, and the harness moves the next databases to a
//! fresh server every few dozen. Fault tests, and the second deployment, run SecantusDB
//! servers of their own. The tests that take from seconds to a minute are
//! `#[ignore = "full suite"]`: `cargo test` runs the rest, `.ci/run` all (the guide's *test
//! server* chapter). `tests/lints.rs` (the derive's code under a crate's strict lints) and
//! `tests/state.rs` (a counting global allocator) are crates of their own, and the derive's
//! compile-time errors are `seqid-derive/tests/ui.rs`; what the derive accepts is `derive`
//! here.

#[macro_use]
mod support;

mod block;
mod cancellation;
mod codes;
mod counters;
mod declared;
mod deployments;
mod derive;
mod driver_cancellation;
mod faults;
mod gapless_storm;
mod in_transaction;
mod items;
mod later;
mod layouts;
mod list_counters;
mod messages;
mod missing_counter;
mod natural;
mod next;
mod object_ids;
mod optimistic;
mod other_tools;
mod other_writers;
mod processes;
mod replace;
mod reserve;
mod resume;
mod scopes;
mod service;
mod several;
mod sharding;
mod shared_counters;
mod spans;
mod start;
mod transactions;
