//! Data layout: the counters and the documents, as stored.
//!
//! ```text
//! counters: { _id: "userid", seq: 2 }             // last id handed out (counters, block)
//! users:    { _id: 1, name: "Sarah C." }          // the id field is _id
//!           { _id: 2, name: "Bob D." }
//!
//! counters: { _id: '["ticket","apollo"]', sequence: "ticket", scope: { project: "apollo" }, seq: 1001 }
//! tickets:  { _id: ObjectId("..."), project: "apollo", number: 1000 }
//! ```
//!
//! The first pair is what the tutorial writes after two inserts; the second is the [scoped](super::scopes) ticket sequence (`start = 1000`).
//!
//! A scope's counter has a string `_id`: the JSON array of the sequence name and the scope values
//! in the declared order (a string as a JSON string, an integer as a number, an ObjectId as
//! `{"$oid":"..."}`, `true`, `false`, `null`). JSON writes each value one way and escapes what a
//! string holds, so two scopes never share a counter, whatever their values contain; sequence
//! names cannot start with `[`, so no unscoped counter looks like one. `sequence` and `scope` are
//! written when the counter is created, for people and other tools:
//! `db.counters.find({ sequence: "ticket" })` lists a sequence's counters. (Not a subdocument
//! `_id`: it compares field by field in order, and upserts may write its fields in another
//! order.)
//!
//! The counter is read as the tutorial writes it, and `$inc` keeps an Int32 counter Int32
//! (MongoDB widens it to Int64 at `i32::MAX`). With another tool's `layout`, the counter is that
//! tool's (see [other tools' counters](super::other_tools)), and seqid's scope encoding above
//! applies to the tutorial's layout only. The `optimistic` strategy keeps no counter: its
//! collection holds the documents alone.
//!
//! A document with items ([items](super::items)) holds each array as its struct writes it, the
//! items' numbers under their keys, and the array's mark in its declared field
//! (`{ _id: 7, lines: [{ no: 1, ... }, { no: 2, ... }], lines_last: 2 }`). Once items are
//! appended, it also holds `_seqid_<field>_appends`, the last 64 appends to the array as
//! `{ token: ObjectId, last: <the mark it set> }`, by which an append whose answer was lost is
//! recognised; the struct need not declare it (serde skips it when reading, unless the struct
//! says `#[serde(deny_unknown_fields)]`, which such a document then needs to lift);
//! [`replace`](crate::Document::replace) keeps it, and the driver's `replace_one` of the
//! struct drops it, narrowing that window to the appends after it.
