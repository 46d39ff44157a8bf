//! The `#[derive(Document)]` macro of [seqid](https://docs.rs/seqid). Use it through the
//! `seqid` crate, which re-exports it next to the `Document` trait.
//!
//! `lib.rs` only dispatches: `ast` models the input, `attr` reads the attributes,
//! `valid` checks them against each other, `expand` writes the impl (or, on error,
//! `fallback` a stand-in next to the errors), and `ctxt` gathers every error so one
//! build reports them all.

mod ast;
mod attr;
mod case;
mod ctxt;
mod declaration;
mod expand;
mod fallback;
mod scope;
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
/// | `strategy` | `"counters"`, `"optimistic"`, `"block"` or `"gapless"` | `"counters"` |
/// | `max_attempts` | attempts of the optimistic strategy, at least 1 | `seqid::DEFAULT_MAX_ATTEMPTS` |
/// | `block_size` | ids per reservation of the block strategy, at least 1 | `seqid::DEFAULT_BLOCK_SIZE` |
/// | `counter_write_concern` | `"majority"` or `"database"`: the counter's `$inc` (counters, block) | `"majority"` |
///
/// `max_attempts` is refused unless `strategy = "optimistic"`, `block_size` unless
/// `strategy = "block"`, and `counter_write_concern` with `"optimistic"` (no counter) or
/// `"gapless"` (its counter follows the transaction's write concern). Collection names must be non-empty, without `$` or NUL, and
/// not start with `system.`.
///
/// # serde attributes
///
/// seqid fills the id field, so serde must write that field's own value as `_id`. The
/// derive refuses, each with an error at the attribute:
///
/// - on the struct: `#[serde(into = "...")]` (another type is serialized),
///   `#[serde(transparent)]` (the struct is serialized as its single field),
///   `#[serde(remote = "...")]` (the struct is not `Serialize` itself), and
///   `#[serde(tag = "_id")]` (the struct's name would be written as `_id`);
/// - on the id field: `skip`, `skip_serializing`, `flatten`, `serialize_with`, `with`
///   and `getter`.
///
/// Attributes that only change deserialization are fine (`from`, `try_from`, `default`,
/// `alias`, `deserialize_with`, `rename(deserialize = "...")`), and so is
/// `skip_serializing_if` on the id, since seqid fills the id before the document is
/// written. Other fields may use any serde attribute.
///
/// On any error, the derive also emits a stand-in impl, so that uses of the type as a
/// `Document` elsewhere do not add errors of their own.
///
/// Generic parameters pass through unchanged: bound them so that the struct is
/// `Serialize + Send + Sync` and the id type is a `seqid::IdField`.
#[proc_macro_derive(Document, attributes(seq_id))]
pub fn derive_document(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::derive(&input).into()
}
