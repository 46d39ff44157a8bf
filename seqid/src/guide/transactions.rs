//! Transactions and write concern.
//!
//! Every insert takes the caller's session, as the driver's actions do, with
//! [`.session(&mut session)`](crate::action::Insert::session):
//!
//! ```no_run
//! # use seqid::Document;
//! # #[derive(serde::Serialize, serde::Deserialize, Document)]
//! # #[seq_id("ticket", collection = "tickets")]
//! # struct Ticket { #[serde(rename = "_id")] id: i64, title: String }
//! # async fn run(db: mongodb::Database, mut session: mongodb::ClientSession) -> Result<(), seqid::Error> {
//! # let mut ticket = Ticket { id: 0, title: "Launch".into() };
//! # let mut tickets = vec![Ticket { id: 0, title: "Land".into() }];
//! let id = ticket.insert(&db).await?;
//! # let mut ticket = Ticket { id: 0, title: "Launch".into() };
//! let id = ticket.insert(&db).session(&mut session).await?;
//! let ids = Ticket::insert_many(&mut tickets, &db).session(&mut session).await?;
//! # Ok(()) }
//! ```
//!
//! In a transaction, `counters` and `block` write the document in it and the counter's `$inc`
//! outside it, so concurrent transactions never conflict on the hot counter document and a
//! rollback leaves a gap but never hands an id out twice (MongoDB's Hibernate extension makes the
//! same choice). The `optimistic` loop reads the maximum and inserts in the transaction, so the
//! candidate is the largest id of the transaction's snapshot plus one; a taken id cannot be
//! retried inside it (the failed write aborts it), so its error keeps the driver's
//! `TransientTransactionError` label and the retry of the whole transaction takes a fresh id.
//! `gapless` runs everything in the transaction, which it requires: its counter's `$inc` joins
//! it, so an aborted transaction takes its id back; the transactions of one process take the
//! counter in turn, each once the one before has committed, and those of other processes conflict
//! on it (`WriteConflict`, labelled `TransientTransactionError`) and run again; outside a
//! transaction the insert is refused before anything is written
//! ([`Error::TransactionRequired`](crate::Error::TransactionRequired)).
//!
//! Inside a transaction nothing is retried or looked up after a failure: a failed write aborts
//! the transaction, whose fate decides the document's. [`seqid::Error`](crate::Error) converts
//! into the driver's error with its labels, so `?` inside `and_run`'s callback lets the driver
//! retry what is transient. Make the documents inside the callback, so that a retry starts from
//! unset ids:
//!
//! ```no_run
//! # use seqid::Document;
//! # use serde::{Deserialize, Serialize};
//! #[derive(Serialize, Deserialize, Document)]
//! #[seq_id("invoice", collection = "invoices", strategy = "gapless")]
//! struct Invoice {
//!     #[serde(rename = "_id")]
//!     id: i64,
//!     total: i64,
//! }
//!
//! # async fn run(client: mongodb::Client) -> mongodb::error::Result<()> {
//! let db = seqid::Sequences::new(&client).database("billing");
//! let mut session = client.start_session().await?;
//! let number = session
//!     .start_transaction()
//!     .and_run(db, |session, db| {
//!         Box::pin(async move {
//!             let mut invoice = Invoice { id: 0, total: 4200 };
//!             Ok(invoice.insert(db).session(session).await?)
//!         })
//!     })
//!     .await?;
//! # Ok(()) }
//! ```
//!
//! [`Document`'s notes on sessions and transactions](crate::Document#sessions-and-transactions)
//! say the same per strategy.
//!
//! # The counter's write concern
//!
//! An `$inc` acknowledged by the primary alone (`w: 1`) can be rolled back by a failover: the new
//! primary never saw it and hands the same ids out again (the block strategy is the most exposed,
//! as a process keeps handing out a range that was reissued). So seqid sends every counter update
//! with `w: "majority"` (keeping the database's `journal` and `wtimeout`), unless the type says
//! `counter_write_concern = "database"` (for speed, accepting that risk; see
//! [`CounterWriteConcern`](crate::CounterWriteConcern)). The document's own insert always goes
//! with the collection's write concern, and `gapless` counters follow the transaction's. The
//! tests check both with the driver's command monitoring.
//!
//! On a single server, `majority` means the primary alone, so use `journal: true` on the database
//! when a crash must not lose a counter update (see [gaps](super::guarantees#gaps)).
