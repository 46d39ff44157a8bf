//! What the derive accepts, as ordinary code: each case declares models the way users
//! do and checks what the derive generated for them (the constants, the accessors, that
//! the futures are `Send`). They were trybuild's `pass` cases; here they build with the
//! rest of the tests, so that trybuild only checks (`cargo check`) the cases that must
//! fail to compile, in one build. `tests/lints.rs` keeps the case that needs a crate of
//! its own (lints on the crate's root).
//!
//! The models' fields exist to be serialized, and some cases only need to compile: what
//! is never read is allowed here.
#![allow(dead_code)]

mod block;
mod counters_all_keys;
mod defaults;
mod display_codes;
mod extra_serde_attrs;
mod field_classic_unchanged;
mod field_named_id;
mod field_option_no_container;
mod field_rename;
mod field_scope_several;
mod field_strategies;
mod field_ticket;
mod gapless;
mod generic_struct;
mod id_types;
mod keys_any_order;
mod natural_keys;
mod optimistic;
mod rename_serialize;
mod scope_types;
mod send_futures;
mod serde_allowed;
mod several_sequences;
mod start;
