//! Display codes: `INV-2026-0042`, never twice.
//!
//! A `String` field marked `#[seq_display("...")]` holds the code people read, print and search
//! for, written by [`insert`](crate::Document::insert) from the document's numbers and fields
//! and stored in the same write (no second round trip). The number stays the source of truth
//! (sorting, ranges, the counter's administration); the code follows it. An invoice series
//! numbered per year:
//!
//! ```no_run
//! use seqid::Document;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Debug, Serialize, Deserialize, Document)]
//! #[seq_id(collection = "invoices")]
//! struct Invoice {
//!     year: i32,
//!     #[seq_id("invoice", scope = "year")] // 1, 2, 3, ... each year
//!     number: i64,
//!     #[seq_display("INV-{year}-{number:04}")] // INV-2026-0001, ..., INV-2026-12345
//!     code: String,
//!     total: i64,
//! }
//!
//! # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
//! Invoice::create_indexes(&db).await?; // ["year_1_number_1", "code_1"]
//! let mut invoice = Invoice { year: 2026, number: 0, code: String::new(), total: 4200 };
//! invoice.insert(&db).await?; // number and code filled, one write
//! let same = Invoice::find_by_code(&db, "INV-2026-0001").await?;
//! # Ok(()) }
//! ```
//!
//! - **Checked at compile time never to repeat.** The derive refuses a format that could give
//!   two documents one code: it must show the sequence's number and every scope field of that
//!   sequence, and keep its parts apart so that a code reads back into them. The rules and their
//!   reasons are in the [attribute reference](super::attributes#display-codes); each
//!   broken rule is a compile error at the format naming the placeholder.
//! - **Checked at run time where only the value can tell.** A string shown before more text is
//!   ended by that text's first character: a shop named `north-east` in `"{shop}-{number}"`
//!   would read as `north` + `east-1`. Such a value is refused with
//!   [`ErrorKind::InvalidCode`](crate::error::ErrorKind::InvalidCode), naming the sequence, the value and the
//!   format, before any id is taken.
//! - **Held by the database too.** [`create_indexes`](crate::Document::create_indexes) makes a
//!   unique index on the field (`code_1`, partial on strings, so that documents stored before the
//!   field existed do not collide), and the derive writes `find_by_<field>` (`find_by_code` for a
//!   field named `code`, returning a [`FindOne`](crate::action::FindOne) by code).
//! - **With everything else.** A code follows the ids: `insert` refuses a document whose code is
//!   set (`Error::InvalidCode`, as [`IdAlreadySet`](crate::error::ErrorKind::IdAlreadySet) for an id); a
//!   document known not to be stored gets its code emptied with its ids; one of unknown fate
//!   keeps it, and [`resume_insert`](crate::Document::resume_insert) writes the code of the ids
//!   it carries. The optimistic loop writes a new code with each candidate.
//!   [`insert_many`](crate::Document::insert_many) writes every document's. Each sequence of a
//!   document may have a code of its own (one per sequence); the insert's span shows the code
//!   (`code`, the first and the last for many). Writing the code costs the client under 1 % of an
//!   insert's instructions and one allocation (the repository's `BENCHMARKS.md`, *Display
//!   codes*).
