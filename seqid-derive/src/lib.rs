//! The `#[derive(Document)]` macro of [seqid](https://docs.rs/seqid). Use it through the
//! `seqid` crate, which re-exports it next to the `Document` trait.
//!
//! `lib.rs` only dispatches: `ast` models the input, `attr` reads the attributes,
//! `valid` checks them against each other, `expand` writes the impl, and `ctxt`
//! gathers every error so one build reports them all.

mod ast;
mod attr;
mod case;
mod ctxt;
mod expand;
mod valid;

use proc_macro::TokenStream;
use syn::{DeriveInput, parse_macro_input};

/// Implements `seqid::Document`: the type's ids are taken from a sequence.
///
/// The struct needs named fields, one of them serialized as `_id` (named `_id`, or marked
/// `#[serde(rename = "_id")]`) of type `i32`, `i64`, `u32`, `u64` or an `Option` of one,
/// and a `#[seq_id("name", ...)]` attribute:
///
/// ```ignore
/// use seqid::Document;
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Serialize, Deserialize, Document)]
/// #[seq_id("orderid", collection = "orders", strategy = "block", block_size = 50)]
/// struct Order {
///     #[serde(rename = "_id")]
///     id: Option<u32>,
///     total: u64,
/// }
///
/// assert_eq!(Order::SEQUENCE.collection, "orders");
/// ```
///
/// (Tested in the `seqid` docs and the workspace's `tests/ui`, where the runtime exists.)
///
/// # `#[seq_id(...)]`
///
/// The first argument is the sequence name, a non-empty string literal: the `_id` of
/// the sequence's document in the counters collection. Then, in any order:
///
/// | key | value | default |
/// |-----|-------|---------|
/// | `collection` | collection the documents go into | the struct name in snake_case (`BlogPost` → `"blog_post"`) |
/// | `counters` | collection holding the counters | `seqid::DEFAULT_COUNTERS` (`"counters"`) |
/// | `strategy` | `"counters"`, `"optimistic"` or `"block"` | `"counters"` |
/// | `max_attempts` | attempts of the optimistic strategy, at least 1 | `seqid::DEFAULT_MAX_ATTEMPTS` |
/// | `block_size` | ids per reservation of the block strategy, at least 1 | `seqid::DEFAULT_BLOCK_SIZE` |
///
/// `max_attempts` is refused unless `strategy = "optimistic"`, and `block_size` unless
/// `strategy = "block"`. Collection names must be non-empty, without `$` or NUL, and
/// not start with `system.`.
///
/// Generic parameters pass through unchanged: bound them so that the struct is
/// `Serialize + Send + Sync` and the id type is a `seqid::IdField`.
#[proc_macro_derive(Document, attributes(seq_id))]
pub fn derive_document(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::derive(&input).into()
}
