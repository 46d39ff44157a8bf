//! Numbering a stored document later: drafts numbered when they are issued.
//!
//! A draft invoice is saved without a number; it gets the next number when it is issued,
//! and only then (in many countries an invoice number is given at issue, with no gap). The
//! tools seqid shares counters with number at insert only. Declare the number's sequence
//! `numbered = "later"`, on an `Option` field:
//!
//! ```no_run
//! use mongodb::bson::{doc, oid::ObjectId};
//! use seqid::action::Transaction;
//! use seqid::Document;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Debug, Serialize, Deserialize, Document)]
//! #[seq_id(collection = "invoices")]
//! struct Invoice {
//!     #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
//!     id: Option<ObjectId>,
//!     year: i32,
//!     #[seq_id("invoice", scope = "year", strategy = "gapless", numbered = "later")]
//!     number: Option<i64>, // None in a draft
//!     #[seq_display("INV-{year}-{number:04}")]
//!     code: String, // empty in a draft
//!     status: String,
//!     total: i64,
//! }
//!
//! # async fn run(client: mongodb::Client, db: seqid::Database) -> Result<(), Box<dyn std::error::Error>> {
//! Invoice::create_indexes(&db).await?; // ["year_1_number_1", "code_1"], partial: drafts hold none
//! // A draft, stored as it is, with the driver.
//! let draft = Invoice { id: None, year: 2026, number: None, code: String::new(), status: "draft".into(), total: 4200 };
//! let id = Invoice::collection(&db).insert_one(&draft).await?.inserted_id;
//!
//! // Issued: numbered in a transaction, with the change that issues it.
//! let mut session = client.start_session().await?;
//! let issued = Transaction::new(&mut session)
//!     .run((&db, &id), |session, (db, id)| {
//!         Box::pin(async move {
//!             Invoice::number_draft(*db, doc! { "_id": id.clone() })
//!                 .set(doc! { "status": "issued" })
//!                 .session(session)
//!                 .await
//!         })
//!     })
//!     .await?;
//! assert_eq!(issued.doc.code, "INV-2026-0001");
//! # Ok(()) }
//! ```
//!
//! `insert` does not number such a type: it refuses it
//! ([`ErrorKind::NumberedLater`](crate::error::ErrorKind::NumberedLater)), since a draft is a document like any
//! other and the driver stores it as it is. The unique indexes
//! [`create_indexes`](crate::Document::create_indexes) makes are partial: on the number where
//! it is a number, on the code where it is not empty, so that drafts are not duplicates of
//! one another.
//!
//! A draft type may hold several sequences if every one of them is numbered later (a
//! sequence numbered at insert beside them would never be taken, since seqid does not
//! insert such a type: a compile error says so). Issuing a draft then numbers them all:
//! each takes its number from its own counter and scope (their reservations out at once,
//! a gapless one's in the caller's transaction), and the one conditional update sets every
//! number and every code, where the first sequence's number is still unset; a draft whose
//! other number is typed already is refused
//! ([`ErrorKind::IdAlreadySet`](crate::error::ErrorKind::IdAlreadySet), naming it) before anything is
//! taken. An issuer that loses the race loses its numbers as for one sequence (a gap with
//! `counters`, back to the handle's live block with `block` for the first sequence, a gap
//! for the others).
//!
//! ```no_run
//! # use mongodb::bson::{doc, oid::ObjectId};
//! # use serde::{Deserialize, Serialize};
//! # use seqid::Document;
//! #[derive(Debug, Serialize, Deserialize, Document)]
//! #[seq_id(collection = "invoices")]
//! struct Invoice {
//!     #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
//!     id: Option<ObjectId>,
//!     year: i32,
//!     #[seq_id("invoice", scope = "year", numbered = "later")]
//!     number: Option<i64>, // per year
//!     #[seq_id("ledger", strategy = "block", numbered = "later")]
//!     ledger: Option<i64>, // across years
//! }
//! # async fn run(db: seqid::Database, id: ObjectId) -> Result<(), seqid::Error> {
//! let issued = Invoice::number_draft(&db, doc! { "_id": id }).await?;
//! println!("{:?} {:?}", issued.doc.number, issued.doc.ledger); // both, set together
//! # Ok(()) }
//! ```
//!
//! # What one call does
//!
//! [`T::number_draft(&db, filter)`](crate::Document::number_draft):
//!
//! 1. Reads the one document the filter finds (on the primary, in the caller's session, at
//!    most two: a second is counted for the message):
//!    [`ErrorKind::DraftNotFound`](crate::error::ErrorKind::DraftNotFound) if none,
//!    [`ErrorKind::DraftAmbiguous`](crate::error::ErrorKind::DraftAmbiguous) if more than one. A filter
//!    such as `{ customer: 8 }` may find the customer's draft and an invoice issued before;
//!    answering with either would answer for a document the caller may not mean, so name the
//!    draft by its `_id` (or number every draft a filter finds with `number_drafts`, below).
//!    A draft numbered already is returned as it is,
//!    [`by_this_call`](crate::Numbered::by_this_call) `false`: no id is taken, and calling
//!    again after any answer is safe.
//! 2. Checks the code fields are empty (a code stored in a draft without a number is refused,
//!    [`ErrorKind::InvalidCode`](crate::error::ErrorKind::InvalidCode): the code is written with the
//!    number, never over what the caller stored) and that the code can be written, then takes
//!    the next id of the draft's scope, as `insert` would (gapless: in the caller's
//!    transaction; [`ErrorKind::TransactionRequired`](crate::error::ErrorKind::TransactionRequired) without one).
//! 3. One conditional update, `{ _id, number: null }` → `$set` the number, its codes and the
//!    caller's own fields ([`.set(...)`](crate::action::NumberDraft::set): the change that
//!    makes it issued, written with the number or not at all; not the number, its codes,
//!    `_id` or a scope field, [`ErrorKind::InvalidOption`](crate::error::ErrorKind::InvalidOption)).
//!
//! **The scope is the draft's.** The number comes from the counter of the scope the draft
//! has when it is issued, so `.set` refuses a scope field, and any key that writes into one
//! (`"year"`, `"year.x"`, and `"a"` for a scope field `a.b`), before any id is taken: a
//! December draft issued with `"year": 2027` would store number 1 of 2026's counter under
//! 2027, whose own counter never handed it out, and 2027's first invoice would meet it. To issue it in another scope, change the scope
//! with the driver first (a draft has no number to keep), then number it.
//!
//! [`ErrorKind::TransactionRequired`](crate::error::ErrorKind::TransactionRequired): crate::Error::TransactionRequired
//!
//! # The race, spelled out
//!
//! Issuers A and B number one draft at once. Both read it unnumbered; both take an id (A
//! takes 7, B takes 8); both send the conditional update. The first to land sets 7; the other
//! matches nothing, since the draft is numbered now, reads the draft again and answers with
//! it: number 7, `by_this_call` false. What B's 8 becomes is the strategy's, counted in
//! [`Stats::races_lost`](crate::Stats::races_lost):
//!
//! | strategy | B's id |
//! |---|---|
//! | `counters` | a gap: the counter's `$inc` cannot be undone |
//! | `block` | back to the handle's live block, which the next draft takes first (a gap through a bare database) |
//! | `gapless` | none: both transactions `$inc` the counter, the second meets a write conflict and aborts, its id with it; `Transaction` runs it again, and it reads the draft numbered |
//!
//! `optimistic` cannot number later: it takes the largest stored number plus one at insert,
//! and keeps no counter to number a draft from (refused at compile time).
//!
//! # Many drafts
//!
//! [`T::number_drafts(&db, filter)`](crate::Document::number_drafts) numbers every draft the
//! filter finds that has no number yet, in the order stated with
//! [`.order(...)`](crate::action::NumberDraft::order) (`_id` ascending by default): the drafts
//! of a scope get increasing numbers in that order, from one reservation per scope. Each draft
//! is then set with its own conditional update (all at once; one after the other in a
//! transaction). A draft another caller numbered meanwhile keeps that number and is left out
//! of the result, which lists the documents this call numbered, in order. It is how seqid is
//! adopted on a collection of documents that have no number yet, and how a day's approved
//! drafts are issued at once. Drafts stored while it runs are numbered by the next call.
//!
//! # Lost answers, faults and cancellation
//!
//! No draft is ever numbered twice: the update sets a number only where none is. When its
//! answer is lost, the call reads the draft: its own number there means it landed (the counter
//! handed that number to this call alone); another number means another caller's landed first,
//! and this one can no longer match; none yet leaves the outcome unknown
//! ([`ErrorKind::OutcomeUnknown`](crate::error::ErrorKind::OutcomeUnknown), with the number taken). Call
//! `number_draft` again: it reads the draft first, and an update still on its way then matches
//! nothing (its number is a gap). A cancelled call leaves the same: nothing if cancelled before
//! its update, else an update that numbers the draft at most once.
