//! Items numbered inside their document: an order's lines 1, 2, 3, numbered at insert and
//! appended later, each number unique within its order and never handed out twice there.
//!
//! An item type derives [`Item`](macro@crate::Item), with `#[seq_no]` on its number field
//! (`i32`, `i64`, `u32`, `u64` or an `Option` of one; 0 or `None` means "not numbered
//! yet"), `#[seq_no(start = 10, step = 10)]` for other numbers. The document declares the
//! array with `#[seq_items(last = "...")]` on a `Vec` of the item type, `last` naming an
//! integer field of its own: the array's **mark**, the last number handed out in it.
//!
//! ```no_run
//! use mongodb::bson::doc;
//! use seqid::{Document, Item};
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Debug, Serialize, Deserialize, Item)]
//! struct Line {
//!     #[seq_no]
//!     no: i64, // 0: not numbered yet
//!     sku: String,
//!     quantity: u32,
//! }
//!
//! #[derive(Debug, Default, Serialize, Deserialize, Document)]
//! #[seq_id("order", collection = "orders")]
//! struct Order {
//!     #[serde(rename = "_id")]
//!     id: i64,
//!     #[seq_items(last = "lines_last")]
//!     lines: Vec<Line>,
//!     #[serde(default)] // 0 in a document stored without it
//!     lines_last: i64, // the mark: the last line number handed out in this order
//! }
//!
//! # async fn run(db: seqid::Database) -> Result<(), seqid::Error> {
//! let line = |sku: &str| Line { no: 0, sku: sku.into(), quantity: 1 };
//! let mut order = Order { lines: vec![line("A-1"), line("B-2")], ..Default::default() };
//! order.insert(&db).await?; // lines 1 and 2, lines_last 2: no round trip more
//! assert_eq!((order.lines[1].no, order.lines_last), (2, 2));
//!
//! let mut more = vec![line("C-3")];
//! let numbers = Order::append_lines(&db, doc! { "_id": order.id }, &mut more).await?;
//! assert_eq!((numbers, more[0].no), (vec![3], 3));
//! # Ok(()) }
//! ```
//!
//! The mark is no value of the caller's: `insert` sets it, whatever the struct holds, and an
//! append reads the stored one. So a struct literal leaves it out, with `#[derive(Default)]` on
//! the document and `..Default::default()` (which leaves the id unset too, 0), as above; and
//! `#[serde(default)]` on the mark reads back a document stored without it (by another writer,
//! or before the array was declared), as 0, or `None` in an `Option` mark, which an append
//! counts as none yet:
//!
//! ```
//! # use seqid::{Document, Item};
//! # use serde::{Deserialize, Serialize};
//! # #[derive(Debug, Serialize, Deserialize, Item)]
//! # struct Line { #[seq_no] no: i64, sku: String }
//! #[derive(Debug, Default, Serialize, Deserialize, Document)]
//! #[seq_id("order", collection = "orders")]
//! struct Order {
//!     #[serde(rename = "_id")]
//!     id: i64,
//!     #[seq_items(last = "lines_last")]
//!     lines: Vec<Line>,
//!     #[serde(default)]
//!     lines_last: i64,
//! }
//!
//! let order = Order { lines: vec![Line { no: 0, sku: "A-1".into() }], ..Default::default() };
//! assert_eq!((order.id, order.lines_last), (0, 0));
//!
//! let stored = mongodb::bson::doc! { "_id": 7, "lines": [{ "no": 1, "sku": "A-1" }] };
//! let read: Order = mongodb::bson::from_document(stored).unwrap();
//! assert_eq!((read.id, read.lines[0].no, read.lines_last), (7, 1, 0));
//! ```
//!
//! The numbers live in the document, and so does the mark: no counters collection, no
//! counter per document. The mark is a declared field, read and written with the struct
//! (write a document back with [`replace`](#writing-a-document-back-replace), below); a
//! document that never had an item holds `start - step` there (0 for the default start 1,
//! step 1), so that its first item gets `start`. Where that is below 0 (`start = 0`), the mark is a signed integer or an `Option`,
//! which then holds `None` (an unsigned plain mark is refused at insert,
//! [`ErrorKind::ItemNumberOverflow`](crate::error::ErrorKind::ItemNumberOverflow)). A mark missing, null or
//! below `start - step` (a document stored by another writer with 0 there) counts as none yet.
//!
//! # At insert
//!
//! Every insert path (`insert`, with a [reserved id](crate::Reserved) too, `insert_many`,
//! `find_or_insert`, `find_or_insert_many`, in a transaction or not) numbers each array's items in memory before the write,
//! `start`, `start + step`, ..., writes the numbers back into the caller's struct and sets
//! the mark, and stores them with the document in its one write: no round trip more. An item
//! that carries a number already is refused before anything is written
//! ([`ErrorKind::ItemNumberSet`](crate::error::ErrorKind::ItemNumberSet), naming the array, the position and
//! the value), as a document carrying an id is. Like the ids, the numbers are set back to
//! unset (and the mark to `start - step`) when the document is known not to be stored, so that
//! the same struct can be inserted again; they are kept when the outcome is unknown, and
//! `resume_insert` stores them as they are. A document stored with the driver is stored as
//! it is, its items unnumbered (`no: 0`) and an append after them numbered from `start`: a
//! document whose id is known before it is stored is inserted with
//! [`.reserved(token)`](crate::action::Insert::reserved)
//! ([which call a number comes from](super::numbers)).
//!
//! # Appending: `append_<field>`
//!
//! The derive writes `append_<field>(&db, filter, &mut items)` for each array
//! ([`AppendItems`](crate::action::AppendItems)), on a [`seqid::Database`](crate::Database) or
//! a bare `mongodb::Database`: the items are appended to the one stored document `filter`
//! finds, numbered after its mark, the numbers written into the items and returned. Refused
//! before anything is written: an item with its number set
//! ([`ErrorKind::ItemNumberSet`](crate::error::ErrorKind::ItemNumberSet)), a filter that finds no document
//! ([`ErrorKind::ItemsNotFound`](crate::error::ErrorKind::ItemsNotFound)), one that finds more than one
//! ([`ErrorKind::ItemsAmbiguous`](crate::error::ErrorKind::ItemsAmbiguous), with how many: the append would
//! have had to pick one the caller may not mean), a document whose field holds something
//! other than an array or null ([`ErrorKind::ItemsNotArray`](crate::error::ErrorKind::ItemsNotArray)).
//!
//! Name the document by its `_id`: a filter that names `_id` by equality at its top level
//! (`{ _id: v }`, `v` neither an operator document nor a regular expression, or
//! `{ _id: { $eq: v } }`, beside other conditions or not) matches one document at most and
//! goes as it is. Any other filter (`{ customer: 8 }`, `{ _id: { $in: [..] } }`) is first
//! read down to its document: one `find` with the filter, projected to `_id`, at most two
//! found; none is `ItemsNotFound`, two are `ItemsAmbiguous` (counted with one
//! `countDocuments` more), one is appended to by `{ $and: [filter, { _id: found }] }`, so that
//! it still has to match the filter. On the conditional way that check is the read the
//! append makes anyway (it reads up to two documents): no round trip more.
//!
//! What one append costs:
//!
//! | server | commands | what they do |
//! |---|---|---|
//! | MongoDB 4.2+, SecantusDB | one `findAndModify`; a filter not by `_id` one `find` first | an update pipeline of one `$set` stage, in which every expression sees the document as it was: `base = max(mark or start - step, the largest number stored)`, the items appended as `$literal`s merged with `base + k * step`, the mark set to `base + n * step`; the new mark projected back |
//! | a server without update pipelines (nx-27017; some MongoDB-compatible services) | one refused `findAndModify` per handle (or per process for bare databases), then per append one `find` and one `update`, again on a lost race | the mark, the array and the recent appends read (up to two documents); one `updateOne` conditional on the `_id` and the mark as read, `$set` of the mark and `$push` of the numbered items (`$set` of the array where it was missing or null, conditional on that too); a `$push` the server refuses because another writer made the field something else than an array meanwhile is read again |
//!
//! The refusal is matched narrowly (nx-27017 0.8's answer) and remembered, so that the next
//! appends go the conditional way from the first.
//!
//! # Writing a document back: `replace`
//!
//! A document read, changed in memory and saved (an edit form) is written back with
//! [`doc.replace(&db)`](crate::Document::replace) ([`Replace`](crate::action::Replace),
//! `.session(..)`), found by its `_id`. It reads the stored marks and hidden lists of recent
//! appends first; a document whose mark is below the stored one, because an append landed
//! after it was read, is refused with [`ErrorKind::ItemsStale`](crate::error::ErrorKind::ItemsStale), and
//! nothing is written: read it again, apply the change, replace again. A mark equal or above
//! is written by a `replace_one` conditioned on the marks as read, the hidden lists kept as
//! read; one that meets an append landing in between matches nothing, and is refused as
//! stale too. Two round trips (`find`, `update`); a type without items is one `replace_one`
//! by `_id`. The items are written as the document holds them: new ones go through
//! `append_<field>`.
//!
//! ```no_run
//! # use mongodb::bson::doc;
//! # use seqid::{Document, Item};
//! # #[derive(serde::Serialize, serde::Deserialize, Item)]
//! # struct Line { #[seq_no] no: i64, sku: String, quantity: u32 }
//! # #[derive(serde::Serialize, serde::Deserialize, Document)]
//! # #[seq_id("order", collection = "orders")]
//! # struct Order { #[serde(rename = "_id")] id: i64, #[seq_items(last = "lines_last")] lines: Vec<Line>, lines_last: i64 }
//! # async fn run(db: seqid::Database) -> Result<(), seqid::Error> {
//! use seqid::error::ErrorKind;
//!
//! loop {
//!     let mut order = Order::sequence().find(&db, 7).await?.expect("stored");
//!     order.lines[0].quantity = 3;
//!     match order.replace(&db).await {
//!         Err(error) if matches!(error.kind(), ErrorKind::ItemsStale { .. }) => continue, // an append landed: again
//!         done => break done?,
//!     }
//! }
//! # Ok(()) }
//! ```
//!
//! What the driver's own `replace_one` of the struct costs: it writes the mark as it was
//! read. A form read at line 2, saved after another request appended line 3 and was told 3,
//! drops line 3 and moves the mark back to 2, and the next append is told 3 again: one number
//! for two lines in one order. And it drops the hidden list of recent appends, so an append
//! whose answer was lost, sent again with its token, is not recognised and appends twice.
//! Without concurrent appends, and for an array whose appends never come after a read, it is
//! harmless but for the tokens.
//!
//! # The races
//!
//! One update of one document is atomic on MongoDB: appenders of one order, in tasks or in
//! processes, each get numbers of their own; the first to land takes `base + 1 ..`, the next
//! sees its mark. The largest stored number counts beside the mark, so an item pushed by
//! another writer with a number and no move of the mark is not numbered again. On the
//! conditional way the appends of one process to one array take turns, each its read and
//! its update (waiting at most 2 s for the one ahead), so they lose no race to each other;
//! between processes, the condition lets one appender of a round through (the mark it read
//! is still there), and the others read again and retry, with backoff, for up to 60 s
//! ([`ErrorKind::RetriesExhausted`](crate::error::ErrorKind::RetriesExhausted) then, with
//! `items: Some(..)`: nothing appended); there, an item another
//! writer pushes with a number between the read and the update, without moving the mark, is
//! not seen.
//!
//! # Gaps, removals, transactions
//!
//! Within a document, appends hand out `mark + step, ...` and move the mark, so the numbers of
//! a document that lost nothing are `start`, `start + step`, ... without a gap. Items removed
//! (a `$pull`, or the struct written back without them) leave their numbers unused for good:
//! the mark does not go back, and neither does the largest stored number. A mark unset by
//! hand falls back on the largest number stored; with neither, numbering starts again at
//! `start`. With [`.session(&mut session)`](crate::action::AppendItems::session) in a
//! transaction, the append is part of the transaction: aborted, the items and the mark go
//! back with it, so committed numbers have no gap.
//!
//! # Lost answers, faults, cancellation
//!
//! Each append carries a token (an `ObjectId`), written with it into a hidden list in the
//! document, `_seqid_<field>_appends`, which keeps the last [`APPENDS_KEPT`](crate::__private::APPENDS_KEPT)
//! (64) appends' `{ token, last }`; the pipeline's filter skips a document whose list holds
//! the token. The driver sends a `findAndModify` or an `update` whose answer was lost once more
//! (a retryable write, deduplicated by MongoDB); if that fails too, the document is read: its
//! token there means the append landed, and the call answers its numbers. If the read fails
//! as well, the call returns [`ErrorKind::ItemsOutcomeUnknown`](crate::error::ErrorKind::ItemsOutcomeUnknown)
//! with the token: send the same append again with
//! [`.token(token)`](crate::action::AppendItems::token), which answers the first one's numbers
//! if it landed and appends once otherwise. An error the server answered with (a mark that
//! is not a number, say), or a command the driver never sent, is
//! [`ErrorKind::Driver`](crate::error::ErrorKind::Driver): nothing was written. In the caller's transaction
//! every error is `ErrorKind::Driver`, the transaction's to retry or abort (nothing is read: the
//! error aborted it). The conditional way needs no token in its filter:
//! its update moves the mark past the value it is conditioned on, so a copy sent again matches
//! nothing.
//!
//! The window: an append is recognised by its token while fewer than 64 appends to the same
//! array came after it, and while the hidden list is there: `replace` keeps it, the
//! driver's `replace_one` of the struct, which does not hold it, empties it. Equal item
//! content is never taken as proof of who wrote it. A struct that says
//! `#[serde(deny_unknown_fields)]` cannot read a document holding the list back (see the
//! [data layout](super::data_layout)).
//!
//! Outside a transaction an append runs to its end in a task of its own if its caller drops
//! it ([cancellation](super::cancellation)): it lands once or not at all, never half, never
//! twice; the caller who dropped it does not learn its numbers (the items it holds stay
//! unnumbered), and reads the document to see them. In the caller's session, the call is the
//! session's and stops where it is dropped, as the driver's own calls do.
//!
//! # Not yet
//!
//! - Item codes (`"{code}/{no}"` written into an item's `String` field, as
//!   [display codes](super::display_codes) are): display codes are the document's, checked by
//!   the derive against the document's sequences and scope, written from `Model` fields and
//!   indexed unique per collection; an item code would be unique per document only, written
//!   by the server in the pipeline (it knows the number, the client does not), and checked
//!   against two types at once. Not done: it does not extend cleanly.
//! - Appends to several documents in one call, and an item's number as a scope of another
//!   sequence.
//!
//! # On the test servers
//!
//! SecantusDB takes the pipeline. It resolves the path `"$lines.no"` to null in an
//! expression, so the largest stored number is read with `$map` over the array, as MongoDB
//! reads it too. nx-27017 refuses pipelines and takes the conditional way; it stores every
//! element of an array `$push` writes to as a JSON string (a server bug the tests work around
//! when they read the items back; the library does not), so there the largest stored number
//! and the recent appends' tokens cannot be read, and the mark alone numbers the items. It
//! applied an update whose filter held `$type` to another document than the one matched, so
//! the conditional update holds no `$type` (see [the test server](super::test_server)).
