//! The attribute reference: `#[seq_id(...)]`, `#[seq_display(...)]`, `#[seq_key]`, the id
//! field, serde.
//!
//! `#[seq_id("name", key = value, ...)]` on a struct with named fields puts its `_id` on the
//! sequence. `#[seq_id("name", key = value, ...)]` on an integer field puts that field on a
//! sequence, beside the `_id` one or not (any number of fields; see [several
//! sequences](super::several_sequences)); without a sequence on `_id`, the struct's attribute is
//! `#[seq_id(collection = "...")]` (or nothing, for the default collection), and every other key
//! goes on the fields. Every mistake is a compile error pointing at the offending token. The
//! [derive's own documentation](macro@crate::Document) says the same, rule by rule.
//!
//! ```
//! use seqid::{Document, Model};
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize, Document)]
//! #[seq_id("orderid", collection = "orders", strategy = "block", block_size = 50)]
//! struct Order {
//!     #[serde(rename = "_id")]
//!     id: Option<u32>,
//!     total: u64,
//! }
//!
//! assert_eq!(Order::SEQUENCE.collection, "orders");
//! assert_eq!(Order::SEQUENCE.field, "_id");
//! ```
//!
//! | key | value | default | strategies |
//! |---|---|---|---|
//! | *(first)* | the sequence name, a non-empty string not starting with `[`: the `_id` of its counter document (of each scope's, with the scope values), or the name another tool's `layout` finds its counter by | required | all |
//! | `collection` | the collection documents are inserted into; on the struct only | the struct name in snake_case (`BlogPost` → `blog_post`), never pluralised | all |
//! | `counters` | the counters collection | `"counters"` ([`DEFAULT_COUNTERS`](crate::Sequence::DEFAULT_COUNTERS)), or the `layout`'s tool's | counters, block, gapless |
//! | `strategy` | `"counters"`, `"optimistic"`, `"block"` or `"gapless"` (see [strategies](super::strategies)) | `"counters"` | |
//! | `time_budget_ms` | how long the loop keeps retrying while other writers take its ids, before [`ErrorKind::RetriesExhausted`](crate::error::ErrorKind::RetriesExhausted) (≥ 1); per call [`.time_budget(d)`](crate::action::Insert::time_budget) | 10000 ([`DEFAULT_TIME_BUDGET`](crate::Sequence::DEFAULT_TIME_BUDGET)) | optimistic |
//! | `max_attempts` | at most this many inserts before `ErrorKind::RetriesExhausted` (≥ 1), the time budget holding too; per call [`.max_attempts(n)`](crate::action::Insert::max_attempts) | none: time alone bounds the loop | optimistic |
//! | `block_size` | ids reserved per round trip (≥ 1) | 100 ([`DEFAULT_BLOCK_SIZE`](crate::Sequence::DEFAULT_BLOCK_SIZE)) | block |
//! | `counter_write_concern` | `"majority"` or `"database"` (the database's own) for the counter's `$inc` (see [`CounterWriteConcern`](crate::layout::CounterWriteConcern)) | `"majority"` | counters, block |
//! | `scope` | on a field sequence: a field, `scope = "project"`, or several, `scope = ["tenant", "year"]`, whose values each have a counter of their own (see [scopes](super::scopes)) | none | all |
//! | `start` | the first id (1 to `i64::MAX`; 0 too in an `Option` id field, where 0 is not "unset"): a counter that does not exist yet is created at `start - step` before its first `$inc` (so concurrent first use never races; a handle checks once, a bare `mongodb::Database` on every call, one round trip more); one that exists, made by seqid or another tool, goes on from its value; `sync_counter` never sets it below `start - step`; the optimistic strategy never takes an id below `start` | 1 ([`DEFAULT_START`](crate::Sequence::DEFAULT_START)), or the `layout`'s tool's (0 for mongoose-auto-increment and typegoose) | all |
//! | `step` | how far apart ids are (≥ 1): `step = 2` gives 1, 3, 5, ...; with `start = 2`, 2, 4, 6, ... (two writers interleaving by parity); a block of `n` is one `$inc: n × step` | 1 | counters, block, gapless |
//! | `layout` | another tool's counter layout, to share its counter (see [other tools' counters](super::other_tools)): `"tutorial"`, `"mongoengine"`, `"mongoose-sequence"`, `"mongoose-auto-increment"`, `"typegoose"`, `"go"` | `"tutorial"` | counters, block, gapless |
//! | `counter_name`, `counter_field`, `counter_value`, `counter_holds` | a layout by hand: the field holding the sequence name (`"_id"`, or a field of a counter with an ObjectId `_id`), a field holding the numbered field's key, the value's field, and `"last"` or `"next"` for what the value is | `"_id"`, none, `"seq"`, `"last"` | counters, block, gapless |
//!
//! On the struct without a name, only `collection` is accepted: the other keys set up the
//! sequence, and go in the field's attribute. Keys are refused where they do not apply:
//! `max_attempts` and `time_budget_ms` unless `strategy = "optimistic"`, `block_size` unless
//! `strategy = "block"`, `counter_write_concern` with `"optimistic"` (no counter) or `"gapless"`
//! (its counter follows the transaction's write concern), and what a counter is (`counters`,
//! `layout`, `step`, the `counter_*` keys) with `"optimistic"`, which keeps none. A `layout` is a
//! tool's whole: the `counter_*` keys are refused with it. By hand, a scope needs a counter found
//! by `_id`, `counter_field` needs `counter_name`, and each key names a field of its own.
//! Collection names must be non-empty, without `$` or NUL, and not start with `system.`.
//!
//! # The id field
//!
//! The **id field** is the field serialized as `_id` (`#[serde(rename = "_id")]` or a field named
//! `_id`), or the field that carries `#[seq_id("name", ...)]`. Its type is `i32`, `i64`, `u32`,
//! `u64` or an `Option` of one, or a newtype over one of those that
//! [`seqid::newtype_id!`](crate::newtype_id) makes an id type. The macro does not declare the
//! type: declare the newtype yourself, then give it the one line (serde writes a newtype as the
//! integer inside):
//!
//! ```
//! use seqid::Document;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
//! struct TicketNo(i64); // your type, declared as usual
//!
//! seqid::newtype_id!(TicketNo(i64)); // makes it an id type: implements seqid::IdField
//!
//! #[derive(Serialize, Deserialize, Document)]
//! #[seq_id("ticket", collection = "tickets")]
//! struct Ticket {
//!     #[serde(rename = "_id")]
//!     number: TicketNo,
//!     title: String,
//! }
//! ```
//!
//! # serde attributes
//!
//! serde must write the id field's own value as `_id`, so these are compile errors: `into`,
//! `transparent`, `remote` and `tag = "_id"` on the struct; `skip`, `skip_serializing`,
//! `flatten`, `serialize_with`, `with` and `getter` on the id field; `skip`, `skip_serializing`
//! and `flatten` on a scope field. Deserialize-only attributes (`from`, `try_from`, `default`,
//! `alias`, `deserialize_with`) and `skip_serializing_if` on the id are fine.
//!
//! # An id already set
//!
//! `insert` fills only an unset id (`0`, or `None`). A document that already carries an id is
//! refused with [`ErrorKind::IdAlreadySet`](crate::error::ErrorKind::IdAlreadySet) before any id is taken:
//! inserting a copy of a stored document must not give it a second life. An id the program
//! means to give a document (shown before the document is stored) is reserved for it,
//! [`reserve_id`](crate::Document::reserve_id), and given with its token,
//! [`insert(..).reserved(token)`](crate::action::Insert::reserved), which writes the rest
//! as any insert does (codes, items). An id from elsewhere (an import) goes in with the
//! driver, then [`sync_counter`](crate::SequenceOf::sync_counter) so that the sequence goes on
//! above it;
//! [`resume_insert`](crate::Document::resume_insert) is only for a document whose insert ended
//! in [`OutcomeUnknown`](crate::error::ErrorKind::OutcomeUnknown) or was cancelled.
//!
//! # Display codes
//!
//! `#[seq_display("format")]` on a `String` field (not a sequence's field, not `_id`, written by
//! serde as itself) makes it the document's code (see [display codes](super::display_codes)).
//! The format is a string literal; what it accepts, and why that is enough for two documents
//! never to share a code:
//!
//! - `{field}` shows a field by its Rust name: a sequence's field (`{id}` for the `_id` one), or
//!   a field whose type is written `String` or a primitive integer. Nothing else: a float's or an
//!   enum's text need not tell its values apart. `{field:0N}` pads a number with zeros to `N`
//!   digits, and a number wider than `N` is written whole, never cut. `{{` and `}}` are braces.
//! - It shows a sequence's number (the first one shown is the sequence the code belongs to, one
//!   code per sequence) and every scope field of that sequence: numbers repeat across scopes.
//! - Two placeholders are never side by side: `{a}{b}` writes `1`+`23` and `12`+`3` alike, and
//!   `{a:04}{b:04}` too once `a` reaches 10000.
//! - A number is never followed by a digit (`{number}0`).
//! - A string followed by text is ended by the text's first character, which its values must not
//!   hold (checked at run time, before any id is taken); a string at the end may hold anything;
//!   no width on a string.
//!
//! Read from the left, text matches itself, a number is an optional `-` and the longest run of
//! digits, a string runs to its separator or to the end: a code reads back into exactly one set
//! of values, among them the number and its scope, which the sequence hands out once.
//!
//! # Natural keys
//!
//! `#[seq_key]`, alone, on each field that identifies a document before it is stored (an
//! email; a tenant and an external reference: several marked fields make one compound key),
//! for [`find_or_insert`](crate::Document::find_or_insert). Refused at the attribute, with the
//! reason: arguments or a value (`#[seq_key(...)]`), twice on a field, on the struct, on a field
//! a sequence fills (the `_id` of the struct's sequence, or a `#[seq_id]` field), on the
//! `Option<ObjectId>` `_id` the insert makes, on a display field, and on a field serde does not
//! write as itself (`skip`, `flatten`, `serialize_with`, ...). An `_id` the caller sets (a `String`
//! beside a sequence on another field) may be the key. The key's fields are
//! [`Model::NATURAL_KEY`](crate::Model::NATURAL_KEY), as serialized; `create_indexes` makes their
//! unique index, named as MongoDB names it (`email_1`, `tenant_1_email_1`).
//! `find_or_insert` refuses a key value that is missing, null or an array, and takes any other
//! as it is: `email: ""` is a key like any other, and every call with an empty email finds the
//! one customer stored with it (check it before the call:
//! [an empty key is a key](super::find_or_insert#an-empty-key-is-a-key)).
//!
//! # Items: `#[derive(Item)]`, `#[seq_no]`, `#[seq_items]`
//!
//! `#[seq_no]` or `#[seq_no(start = N, step = M)]` on one integer field of a type deriving
//! [`Item`](macro@crate::Item) (`i32`, `i64`, `u32`, `u64` or an `Option` of one; `start` from 1,
//! or 0 in an `Option` field; `step` at least 1), and `#[seq_items(last = "field")]` on a
//! document's `Vec` of it, `last` naming the integer field that keeps the array's mark. Refused
//! at the token: no `#[seq_no]` field or two, `#[seq_no]` on a field of another type, on the
//! struct or twice on a field, an unknown key, a step of 0, a negative start, `start = 0` on a
//! plain integer, a serde attribute that would not write the number; `#[seq_items]` on the
//! struct, on a field that is not a `Vec`, without `last`, with a `last` naming no field, the
//! array, a field that is not such an integer or the mark of another array, and an element
//! type that is not an `Item`. See [items](super::items).
