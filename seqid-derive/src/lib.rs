//! The `#[derive(Document)]` macro of seqid.
//!
//! Depend on `seqid`, not on this crate: `seqid` re-exports the derive next to the
//! `Document` trait (`use seqid::Document;` brings both), and the code the derive writes
//! names `::seqid`'s items, so it compiles only where `seqid` is a dependency. The
//! attributes it reads are documented on [`Document`](derive@Document).
//!
//! A pipeline in three stages, each using only the ones before it; `lib.rs` runs them:
//!
//! - parse: `ast` models the input, reading each attribute through `attr` (a file per
//!   attribute); `declaration` finds the attributes that declare sequences, the fields they
//!   fill and the primary one, with `scope` resolving the scope fields;
//! - check: `valid` checks the sequences against each other and the struct (`layout` the
//!   counter's layout, step and first id, `later` a sequence numbered later, `object_id` an
//!   ObjectId where a sequence would put its number); `display` parses, checks and
//!   resolves the display codes, `natural` the fields of the natural key;
//! - expand: `expand` writes the impl of a valid input, or `fallback`, on error, a stand-in
//!   next to the errors, both from the pieces of `tokens`.
//!
//! Below every stage, `ctxt` gathers the errors so that one build reports them all, `case`
//! converts names, `closest` finds the field a mistyped name meant, and `types` tells what a
//! field's type is written as.

#![warn(missing_docs)]

mod ast;
mod attr;
mod case;
mod closest;
mod ctxt;
mod declaration;
mod display;
mod expand;
mod fallback;
mod item;
mod items;
mod later;
mod layout;
mod natural;
mod object_id;
mod scope;
mod tokens;
mod types;
mod valid;

use proc_macro::TokenStream;
use proc_macro2::Span;
use syn::{DeriveInput, parse_macro_input};

use crate::ast::Container;
use crate::ctxt::Ctxt;
use crate::declaration::Declaration;

/// Implements `seqid::Model` (and with it `seqid::Document`): a field of the type is
/// filled from a sequence.
///
/// The struct needs named fields and declares at least one sequence, on `_id` or on a
/// field (or several: see below). A field a sequence fills has type `i32`, `i64`, `u32`, `u64` or an `Option` of one (or
/// a `seqid::newtype_id!` over one). An `ObjectId` is refused, at its type, with what to
/// write instead: an ObjectId `_id` stays the driver's, and the sequence goes on an integer
/// field beside it (see the next sections).
///
/// # The sequence on `_id`
///
/// `#[seq_id("name", ...)]` on the struct puts the sequence on the field serialized as
/// `_id` (named `_id`, or marked `#[serde(rename = "_id")]`):
///
/// ```
/// use seqid::{Document, Model};
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
/// assert_eq!(Order::SEQUENCE.field, "_id");
/// ```
///
/// Such a type finds a document by its number with `Order::sequence().find(&db, id)`,
/// which looks in `_id`.
///
/// # The sequence on a field, per scope
///
/// `#[seq_id("name", ...)]` on a field puts the sequence on that field, and `_id` is left
/// to the driver (an `ObjectId`, when the struct has no `_id` field or leaves it out).
/// With `scope`, the field is numbered per value of the scope fields: tickets 1000,
/// 1001, ... in each project. The struct's `#[seq_id(collection = "...")]`, without a
/// name, then only sets the collection; without it, the collection takes its default.
///
/// ```
/// use mongodb::bson::oid::ObjectId;
/// use seqid::{Document, Model};
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Serialize, Deserialize, seqid::Document)]
/// #[seq_id(collection = "tickets")]
/// struct Ticket {
///     #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
///     id: Option<ObjectId>,
///     project: String,
///     #[seq_id("ticket", scope = "project", start = 1000)]
///     number: i64,
/// }
///
/// assert_eq!(Ticket::SEQUENCE.field, "number");
/// assert_eq!(Ticket::SEQUENCE.scope, &["project"]);
///
/// async fn find(db: mongodb::Database) -> Result<Option<Ticket>, seqid::Error> {
///     Ticket::sequence().find(&db, 1000).scope("apollo").await
/// }
/// ```
///
/// `Document::sequence()`'s `find` looks in the field the sequence numbers, with the scope
/// named by `.scope(...)` for a scoped sequence (checked at compile time).
///
/// The `_id` sequence cannot be scoped: a scoped number repeats from one scope to the
/// next, and `_id` must be unique.
///
/// # Several sequences
///
/// A struct may declare a sequence on `_id` and one on each of any number of other
/// fields; `insert` fills them all and writes the document once. The primary sequence
/// (`Model::SEQUENCE`, `sequence_id`) is the optimistic one if there is one, else the
/// `_id` one, else the first field's; the others are `Model::OTHERS`, read and filled
/// through `Model::other_id`. For such a struct the derive also writes one associated
/// function per sequence, `<field>_sequence()`, giving its `seqid::SequenceOf` handle,
/// whose `find(&db, number)` looks in that sequence's field.
/// Refused, each at the attribute, with the reason: two `#[seq_id]` on the same item (a
/// field holds one number), a sequence name declared twice (one counter for two fields
/// would give them two numbers of it, and two declarations could set it up
/// differently), a second `optimistic` sequence (two loops in one write could not tell
/// whose number another writer took), and a field's `#[seq_id]` on the `_id` field (the
/// `_id` sequence is declared on the struct). `gapless` goes with any other strategy: it
/// is reserved in the caller's transaction, the others as they always are.
///
/// # `#[seq_id(...)]`
///
/// The first argument is the sequence name, a non-empty string literal not starting with
/// `[` (kept for the counters of scopes): the `_id` of the sequence's document in the
/// counters collection (or, with another tool's `layout`, the name that tool finds its
/// counter by). Then, in any order:
///
/// | key | value | default |
/// |-----|-------|---------|
/// | `collection` | collection the documents go into; on the struct only | the struct name in snake_case (`BlogPost` → `"blog_post"`) |
/// | `counters` | collection holding the counters; not with `"optimistic"` (no counter) | `seqid::Sequence::DEFAULT_COUNTERS` (`"counters"`), or the `layout`'s tool's |
/// | `strategy` | `"counters"`, `"optimistic"`, `"block"` or `"gapless"` | `"counters"` |
/// | `max_attempts` | attempts the optimistic strategy makes at most, at least 1 (the time budget holds too) | none: the time budget alone bounds the loop |
/// | `time_budget_ms` | how long, in milliseconds, the optimistic strategy keeps retrying while other writers take its ids, at least 1 | `seqid::Sequence::DEFAULT_TIME_BUDGET` (10 s) |
/// | `block_size` | ids per reservation of the block strategy, at least 1 | `seqid::Sequence::DEFAULT_BLOCK_SIZE` |
/// | `prefetch` | whether a `Sequences` handle reserves the block strategy's next block once less than half of the live one is left, so that no caller waits for it (`false`: once it is spent; a process then ends holding at most one block less one, not two less one) | `true` |
/// | `counter_write_concern` | `"majority"` or `"database"`: the counter's `$inc` (counters, block) | `"majority"` |
/// | `start` | the first number, from 1 to `i64::MAX` (0 in an `Option` field, where 0 is not "unset") | `seqid::Sequence::DEFAULT_START` (1), or the `layout`'s tool's (0 for mongoose-auto-increment and typegoose) |
/// | `step` | how far apart the ids are, at least 1: `step = 2` gives `start`, `start + 2`, ... (the tools' `inc_amount`, `incrementBy`) | 1 |
/// | `layout` | another tool's counter layout, to share its counter: `"tutorial"`, `"mongoengine"`, `"mongoose-sequence"`, `"mongoose-auto-increment"`, `"typegoose"` or `"go"` (see `seqid::layout::Layout`) | `"tutorial"` |
/// | `counter_name` | a layout by hand: the counter's field holding the sequence name (a counter found by it has an ObjectId `_id` and a unique index on the fields that find it) | `"_id"` |
/// | `counter_field` | a layout by hand: a counter field holding the key of the field numbered, with `counter_name` | none |
/// | `counter_value` | a layout by hand: the counter's field holding its value | `"seq"` |
/// | `counter_holds` | a layout by hand: `"last"` (the last id handed out) or `"next"` (the next one) | `"last"` |
/// | `scope` | `"field"` or `["field", ...]`: the fields, by Rust name, the numbers are counted per; on a field's sequence only | none |
/// | `numbered` | `"insert"` (`insert` numbers the document) or `"later"` (`number_draft` numbers a stored draft when it is issued: see below); on a field's sequence only | `"insert"` |
///
/// On the struct without a name, only `collection` is accepted: the other keys set up the
/// sequence, and go in the field's attribute.
///
/// `max_attempts` and `time_budget_ms` are refused unless `strategy = "optimistic"`, `block_size`
/// and `prefetch` unless `strategy = "block"`, and `counter_write_concern` with `"optimistic"` (no counter) or
/// `"gapless"` (its counter follows the transaction's write concern). Collection names
/// must be non-empty, without `$` or NUL, and not start with `system.`.
///
/// What a counter is, `counters`, `layout`, `step` and the `counter_*` keys, is refused
/// with `"optimistic"`, which keeps none. A `layout` is a tool's whole: the `counter_*`
/// keys are refused with it, and so is what the tool cannot hold: `scope` but with
/// `"tutorial"` and `"mongoose-sequence"`, `step` with `"mongoengine"` and `"go"` (they add
/// 1), `counters` with `"mongoose-auto-increment"` (its collection is fixed). By hand, a
/// scope needs a counter found by `_id`, `counter_field` needs `counter_name`, and each
/// key names a field of its own. A first id of 0 (`start = 0`, or a tool that starts
/// there) needs an `Option` id field.
///
/// `SEQUENCE.field` holds the key the sequence fills and `SEQUENCE.scope` the keys of
/// the scope fields, in the declared order, both as serde writes them (`rename` and
/// `rename_all` applied). A scope field must be another field of the struct than the
/// sequence's and `_id` (unique already, it would leave each document alone in its
/// scope), named once, and written by serde as itself (not `skip`, `skip_serializing` or
/// `flatten`).
///
/// # `#[seq_display("...")]`: display codes
///
/// On a `String` field, `#[seq_display("INV-{year}-{number:04}")]` makes it the document's
/// code: `insert` and `insert_many` write it from the document's numbers and fields once
/// the ids are filled, and store it in the same write. `create_indexes` makes a unique
/// index on it (`code_1`, partial on strings: documents stored before the field existed
/// hold none), and the derive writes `find_by_<field>(&db, code)` for it.
///
/// The format is a string literal of text and placeholders:
///
/// - `{field}` shows a field, named by its Rust name: a sequence's field (the `_id` one
///   too, `{id}` for `id` renamed `_id`), or a field whose type is written `String` or a
///   primitive integer (`i32`, `u64`, ...). `{field:0N}` pads a number with zeros to `N`
///   digits; a number wider than that is written whole, never cut. `{{` and `}}` write
///   braces.
/// - The first sequence field shown is the sequence whose codes these are, and the format
///   shows every scope field of that sequence. One display field per sequence.
/// - No two placeholders side by side: `{a}{b}` writes `1`+`23` and `12`+`3` alike, and a
///   width does not help, since a wider number is written whole.
/// - A number is not followed by a digit (`{number}0`).
/// - A string followed by text is ended by that text's first character: a value holding
///   it is refused at run time, before any id is taken (`seqid::error::ErrorKind::InvalidCode`). A
///   string at the end of the format may hold anything. No width on a string.
///
/// Why that is enough: read from the left, each piece of text matches itself, a number is
/// an optional `-` and the longest run of digits after it, a string runs to its separator
/// or to the end; so a code reads back into one set of values. It holds the sequence's
/// number and scope, which the sequence hands out once, so two documents never get one
/// code. Every rule broken is an error at the format, naming the placeholder; on a field
/// that is not a `String`, that a sequence fills, that serde skips or writes by other
/// means, or on the struct, an error at that token.
///
/// ```
/// # use serde::{Deserialize, Serialize};
/// #[derive(Serialize, Deserialize, seqid::Document)]
/// #[seq_id(collection = "invoices")]
/// struct Invoice {
///     year: i32,
///     #[seq_id("invoice", scope = "year")]
///     number: i64,
///     #[seq_display("INV-{year}-{number:04}")] // INV-2026-0042, INV-2026-12345
///     code: String,
/// }
/// ```
///
/// `insert` refuses a document whose code is set (the code comes with the id), empties it
/// with the ids when the document is known not to be stored, and keeps it with them when
/// the outcome is unknown; `resume_insert` writes the code of the ids the document carries.
///
/// # The natural key: `#[seq_key]`
///
/// `#[seq_key]` on a field puts it in the document's natural key: the values that
/// identify a document before it has an id (an email, a SKU). A compound key is several
/// marked fields (`tenant` and `email`). `Model::NATURAL_KEY` holds their keys as serde
/// writes them (`rename` and `rename_all` applied), in the order of the fields.
/// `find_or_insert` finds the document by the key's values, and inserts it, taking an
/// id, only when no document holds them; `create_indexes` makes the unique index it
/// relies on, named as MongoDB names it by default (`email_1`, `tenant_1_email_1`).
/// A value missing, null or an array is refused when `find_or_insert` is called; any
/// other is a key as it is, the empty string too: every call with `email: ""` finds the
/// one document stored with an empty email, so a program that refuses empty emails
/// checks before the call (`if customer.email.trim().is_empty() { return Err(...) }`).
///
/// ```
/// use seqid::{Document, Model};
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Serialize, Deserialize, Document)]
/// #[seq_id("customer", collection = "customers")]
/// struct Customer {
///     #[serde(rename = "_id")]
///     id: i64,
///     #[seq_key]
///     email: String,
///     name: String,
/// }
///
/// assert_eq!(Customer::NATURAL_KEY, ["email"]);
/// ```
///
/// `#[seq_key]` takes no arguments, and goes once on each field of the key, never on the
/// struct. A key holds values the document has before it is stored, written by serde as
/// themselves, so it is refused, each time at the `#[seq_key]`, on: a field a sequence
/// fills, `_id` included (the insert takes that number); the `Option<ObjectId>` `_id`
/// beside a sequence on another field, which the insert fills (an `_id` the caller sets
/// may be a key); a `#[seq_display]` field (its code is written from the number the
/// insert takes); and a field that serde skips, flattens or writes by other means (`skip`,
/// `skip_serializing`, `flatten`, `serialize_with`, `with`, `getter`), since the key is
/// looked up by the value stored under the field's key.
///
/// # Numbered later
///
/// `numbered = "later"` on a field's sequence numbers a document when it is issued, not
/// when it is stored: an invoice takes its number when it is sent, and the drafts saved
/// before (or thrown away) take none. `insert` does not number such a type (it refuses it,
/// `seqid::error::ErrorKind::NumberedLater`): its drafts are stored with the driver,
/// `T::collection(&db).insert_one(&draft)`, the field left `None`.
/// `T::number_draft(&db, filter)` numbers the one stored draft `filter` finds, when it is
/// issued, and `T::number_drafts(&db, filter)` every draft a filter finds that has no
/// number yet, in order (`_id` ascending unless `.order(...)` says otherwise). A display
/// code of the sequence follows the same rules as any other, and is written with the
/// number. `Model::NUMBERED_LATER` is `true` for such a type, and only such a type is a
/// `seqid::kind::NumberedLater`, the bound of `number_draft` and `number_drafts`: called on
/// another type, they are refused at compile time.
///
/// ```
/// use mongodb::bson::oid::ObjectId;
/// use seqid::Model;
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Serialize, Deserialize, seqid::Document)]
/// #[seq_id(collection = "invoices")]
/// struct Invoice {
///     #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
///     id: Option<ObjectId>,
///     year: i32,
///     #[seq_id("invoice", scope = "year", strategy = "gapless", numbered = "later")]
///     number: Option<i64>, // None in a draft
///     #[seq_display("INV-{year}-{number:04}")] // empty in a draft
///     code: String,
/// }
///
/// assert!(Invoice::NUMBERED_LATER);
/// ```
///
/// Refused, each at the `numbered` key, with the reason: the `_id` sequence (on the
/// struct's `#[seq_id("name", ...)]`: a draft needs an `_id` to be stored and found by, so
/// put the sequence on a field); `strategy = "optimistic"` (it numbers from the largest
/// stored id at insert, and keeps no counter to number a draft from: use `"counters"`,
/// `"block"` or `"gapless"`); a field whose type is not written `Option<...>` (a draft
/// holds `None` until it is numbered, where a plain integer would store 0, which the
/// unique index would count as a number); and a type that declares a sequence numbered at
/// insert beside it (that number would never be taken: such a type is not inserted by
/// seqid). A type may declare several sequences if each is numbered later: issuing a
/// draft numbers them all, in one update.
///
/// # Items numbered inside the document: `#[seq_items(last = "...")]`
///
/// On a `Vec` of a type that derives `seqid::Item` (see [`Item`](derive@Item)),
/// `#[seq_items(last = "lines_last")]` numbers its items inside the document: `insert`
/// numbers them from the item type's start, with no round trip more, and the derive writes
/// `append_<field>(&db, filter, &mut items)`, which appends to a stored document with the
/// next numbers. `last` names another field of the struct, an integer (`i32`, `i64`, `u32`,
/// `u64` or an `Option` of one): the last number handed out in the array, the array's own
/// high-water mark, so that a number is never handed out twice in a document, also after its
/// item is removed. `Model::ITEMS` lists the arrays. The mark is set by `insert`, whatever the
/// struct holds, and read stored by appends: `#[derive(Default)]` and `..Default::default()`
/// leave it out of struct literals, and `#[serde(default)]` reads a document stored without
/// it.
///
/// ```
/// use seqid::{Document, Item, Model};
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Serialize, Deserialize, Item)]
/// struct Line {
///     #[seq_no]
///     no: i64,
///     sku: String,
/// }
///
/// #[derive(Default, Serialize, Deserialize, Document)]
/// #[seq_id("order", collection = "orders")]
/// struct Order {
///     #[serde(rename = "_id")]
///     id: i64,
///     #[seq_items(last = "lines_last")]
///     lines: Vec<Line>,
///     #[serde(default)]
///     lines_last: i64,
/// }
///
/// assert_eq!(Order::ITEMS[0].last, "lines_last");
/// let order = Order { lines: vec![Line { no: 0, sku: "A-1".into() }], ..Default::default() };
/// assert_eq!(order.lines_last, 0);
/// ```
///
/// Refused, each at its token: `#[seq_items]` on the struct, on a field that is not written
/// `Vec<...>`, on `_id`, a sequence's field, a display code or a natural key field, or on a
/// field serde skips or writes by other means; without `last`, with another key, with a
/// `last` that names no field, the array itself, a field that is not such an integer, a
/// sequence's field or `_id`, or the mark of another array; an element type that is not a
/// `seqid::Item` (at the type, with `Item`'s message).
///
/// # serde attributes
///
/// seqid fills the sequence's field, so serde must write that field's own value under
/// its key. The derive refuses, each with an error at the attribute:
///
/// - on the struct: `#[serde(into = "...")]` (another type is serialized),
///   `#[serde(transparent)]` (the struct is serialized as its single field),
///   `#[serde(remote = "...")]` (the struct is not `Serialize` itself), and
///   `#[serde(tag = "_id")]` (the struct's name would be written as `_id`);
/// - on the field the sequence fills (`_id` or the marked field): `skip`,
///   `skip_serializing`, `flatten`, `serialize_with`, `with` and `getter`.
///
/// Attributes that only change deserialization are fine (`from`, `try_from`, `default`,
/// `alias`, `deserialize_with`, `rename(deserialize = "...")`), and so is
/// `skip_serializing_if` on the sequence's field, since seqid fills it before the
/// document is written. Other fields may use any serde attribute (scope fields: see
/// above). Two fields serialized as `_id` are refused in both forms.
///
/// A field named in an attribute (`last`, `scope`, a placeholder) that no field has, but
/// that is close to one (equal but for case, or a few letters off), is answered with the
/// field it most likely meant: "`Order` has no field `line_last`; did you mean `lines_last`?".
///
/// On any error, the derive also emits a stand-in impl, so that uses of the type as a
/// `Document` elsewhere do not add errors of their own.
///
/// Generic parameters pass through unchanged: bound them so that the struct is
/// `Serialize + Send + Sync` and the sequence field's type is a `seqid::IdField`.
#[proc_macro_derive(Document, attributes(seq_id, seq_display, seq_key, seq_items))]
pub fn derive_document(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    derive(&input).into()
}

/// Implements `seqid::Item`: the type is an item of a document's array, numbered inside
/// its document.
///
/// `#[seq_no]` on one field, of type `i32`, `i64`, `u32`, `u64` or an `Option` of one,
/// makes it the item's number: 0 or `None` means not numbered yet. `#[seq_no(start = 10,
/// step = 10)]` numbers 10, 20, 30, ... in each document (`start` from 1, or 0 in an
/// `Option` field; `step` at least 1; both 1 by default). The document declares the array
/// with `#[seq_items(last = "lines_last")]` on a `Vec` of the item type, `last` naming the
/// integer field that keeps the last number handed out in it:
///
/// ```
/// use seqid::{Document, Item, Model};
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Serialize, Deserialize, Item)]
/// struct Line {
///     #[seq_no]
///     no: i64,
///     sku: String,
/// }
///
/// #[derive(Serialize, Deserialize, Document)]
/// #[seq_id("order", collection = "orders")]
/// struct Order {
///     #[serde(rename = "_id")]
///     id: i64,
///     #[seq_items(last = "lines_last")]
///     lines: Vec<Line>,
///     lines_last: i64,
/// }
///
/// assert_eq!(Order::ITEMS[0].number, Line::NUMBER);
/// ```
///
/// Refused, each at its token: no `#[seq_no]` field, or two; `#[seq_no]` on a field that
/// is not such an integer, or on the struct; an unknown key, a `step` of 0, a negative
/// `start`, `start = 0` on a plain integer; a serde attribute that would not write the
/// number under its key. On the document: `#[seq_items]` on a field that is not a `Vec`,
/// without `last`, with a `last` naming no field, a field that is not such an integer, the
/// array itself, or the mark of another array; an element type that is not a
/// `seqid::Item` (at the type).
#[proc_macro_derive(Item, attributes(seq_no))]
pub fn derive_item(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    item::derive(&input).into()
}

/// Parses and checks `input`, every error into one `Ctxt`, then writes the impl, or the
/// errors and the stand-in impl.
fn derive(input: &DeriveInput) -> proc_macro2::TokenStream {
    let cx = Ctxt::new();
    let cont = Container::from_ast(&cx, input);
    let decl = Declaration::from_container(&cx, &cont);
    valid::check(&cx, &cont, &decl);
    let displays = display::resolve(&cx, &cont, &decl);
    let keys = natural::resolve(&cx, &cont, &decl);
    let items = items::resolve(&cx, &cont);
    match (cx.check(), decl.field()) {
        (Ok(()), Some(field)) => {
            expand::impl_document(&cont, &decl, &displays, &keys, &items, field)
        }
        // A missing sequence or `_id` field is reported, so this is not reached; stay
        // total anyway.
        (Ok(()), None) => fallback::expand(
            &cont,
            &decl,
            syn::Error::new(
                Span::call_site(),
                "internal error in #[derive(Document)]: no field for the sequence, yet no \
                 error",
            ),
        ),
        (Err(errors), _) => fallback::expand(&cont, &decl, errors),
    }
}
