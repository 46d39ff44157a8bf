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
//! counter in turn, whatever handle or bare database they come through, each once the one before
//! has committed, and those of other processes conflict on it (`WriteConflict`, labelled
//! `TransientTransactionError`) and run again, as does one that read in the transaction before
//! its insert and had to wait (its snapshot is older than the commit it waited for: see
//! [strategies](super::strategies#gapless); `number_draft` and `find_or_insert` take their turn
//! before their own first read, so that theirs do not); outside a transaction the insert is
//! refused before anything is written
//! ([`ErrorKind::TransactionRequired`](crate::error::ErrorKind::TransactionRequired)).
//!
//! # Running a transaction
//!
//! Inside a transaction nothing is retried or looked up after a failure: a failed write aborts
//! the transaction, whose fate decides the document's. Run the transaction with
//! [`Transaction::new(&mut session).run(context, body)`](crate::action::Transaction), which
//! applies MongoDB's rules for the callback API, as the driver's `and_run` does:
//!
//! - an error labelled `TransientTransactionError` (a write conflict: another transaction took
//!   the gapless counter, the natural key or the draft first) aborts the transaction and runs
//!   the body again, after a short random pause;
//! - a commit answered `UnknownTransactionCommitResult` (its answer lost, a failover) is sent
//!   again alone, never the body: the first commit may have been applied, and a body run again
//!   would find its own work done by "someone else" (`find_or_insert` answering `Found` for the
//!   document it inserted, `number_draft` answering `by_this_call: false`);
//! - any other error aborts the transaction and comes back as it is, of the body's own error
//!   type: a [`seqid::Error`](crate::Error) stays typed (`DraftNotFound`, `InvalidNaturalKey`,
//!   ...), a caller's own error too (any [`Labelled`](crate::action::Labelled) error a `seqid::Error`
//!   converts into, such as `Box<dyn std::error::Error + Send + Sync>`);
//! - all of it for at most its time limit (120 s, the driver's, or
//!   [`time_limit`](crate::action::Transaction::time_limit)); a commit whose result is still
//!   unknown then is [`ErrorKind::TransactionOutcomeUnknown`](crate::error::ErrorKind::TransactionOutcomeUnknown):
//!   it committed whole or not at all, and a read of what it wrote tells which.
//!
//! The transaction's own failures (starting it, committing it) are reported under `T`'s
//! sequence. Make the documents inside the body, so that a run again starts from unset ids;
//! what the body works with comes in as `context`, borrowed for each run:
//!
//! ```no_run
//! # use seqid::Document;
//! # use serde::{Deserialize, Serialize};
//! use seqid::action::Transaction;
//!
//! #[derive(Serialize, Deserialize, Document)]
//! #[seq_id("invoice", collection = "invoices", strategy = "gapless")]
//! struct Invoice {
//!     #[serde(rename = "_id")]
//!     id: i64,
//!     total: i64,
//! }
//!
//! # async fn run(client: mongodb::Client) -> Result<(), seqid::Error> {
//! let db = seqid::Sequences::new(&client).database("billing");
//! # let mut session = client.start_session().await.unwrap();
//! // let mut session = client.start_session().await?;
//! let number = Transaction::new(&mut session)
//!     .run(&db, |session, db| {
//!         Box::pin(async move {
//!             let mut invoice = Invoice { id: 0, total: 4200 };
//!             invoice.insert(*db).session(session).await
//!         })
//!     })
//!     .await?;
//! # Ok(()) }
//! ```
//!
//! The future holds the session until the transaction has committed or aborted: in a service,
//! await it in a task of its own (`tokio::spawn`), so that a request that goes away does not cut
//! it mid-way ([an example service](super::service) does). The driver's own
//! `start_transaction().and_run(...)` works too, and applies the same rules, but returns the
//! driver's error: a `seqid::Error` travels inside it as a custom payload
//! (`error.get_custom::<seqid::Error>()`), or as the driver's error it wraps.
//!
//! [`Document`'s notes on sessions and transactions](crate::Document#sessions-and-transactions)
//! say the same per strategy.
//!
//! # Why the body is boxed
//!
//! The body is a closure that returns `Box::pin(async move { ... })`, not an async closure
//! (`async |session, db| { ... }`, Rust 1.85): `run`'s future holds the body's across its
//! awaits, so it is `Send`, as `tokio::spawn` and axum's handlers need, only if the body's future
//! is. Stable Rust cannot bound that future (`Send` on the future of an `F: AsyncFnMut(..)`
//! needs return-type notation, `F(..): Send`, unstable), and left unbounded rustc fails to prove
//! it `Send` once the closure or its context holds a borrow, as `&db` does
//! ("implementation of `Send` is not general enough", rust-lang/rust#110338 and #139475). A
//! boxed `dyn Future + Send` says so in its type, for one allocation per run:
//!
//! ```no_run
//! # use seqid::Document;
//! # #[derive(serde::Serialize, serde::Deserialize, Document)]
//! # #[seq_id("invoice", collection = "invoices", strategy = "gapless")]
//! # struct Invoice { #[serde(rename = "_id")] id: i64, total: i64 }
//! # async fn run(db: seqid::Database) -> Result<(), Box<dyn std::error::Error>> {
//! use seqid::action::Transaction;
//!
//! let mut session = db.client().start_session().await?;
//! let task = tokio::spawn(async move {
//!     Transaction::new(&mut session)
//!         .run(&db, |session, db| {
//!             Box::pin(async move {
//!                 let mut invoice = Invoice { id: 0, total: 4200 };
//!                 invoice.insert(*db).session(session).await
//!             })
//!         })
//!         .await
//! });
//! let number = task.await??;
//! # Ok(()) }
//! ```
//!
//! An async closure is not taken:
//!
//! ```compile_fail
//! # use seqid::Document;
//! # #[derive(serde::Serialize, serde::Deserialize, Document)]
//! # #[seq_id("invoice", collection = "invoices", strategy = "gapless")]
//! # struct Invoice { #[serde(rename = "_id")] id: i64, total: i64 }
//! # async fn run(db: seqid::Database) -> Result<(), Box<dyn std::error::Error>> {
//! use seqid::action::Transaction;
//!
//! let mut session = db.client().start_session().await?;
//! let task = tokio::spawn(async move {
//!     Transaction::new(&mut session)
//!         .run(&db, async |session, db| {
//!             let mut invoice = Invoice { id: 0, total: 4200 };
//!             invoice.insert(*db).session(session).await
//!         })
//!         .await
//! });
//! let number = task.await??;
//! # Ok(()) }
//! ```
//!
//! # The counter's write concern
//!
//! An `$inc` acknowledged by the primary alone (`w: 1`) can be rolled back by a failover: the new
//! primary never saw it and hands the same ids out again (the block strategy is the most exposed,
//! as a process keeps handing out a range that was reissued). So seqid sends every counter update
//! with `w: "majority"` (keeping the database's `journal` and `wtimeout`), unless the type says
//! `counter_write_concern = "database"` (for speed, accepting that risk; see
//! [`CounterWriteConcern`](crate::layout::CounterWriteConcern)). The document's own insert always goes
//! with the collection's write concern, and `gapless` counters follow the transaction's. The
//! tests check both with the driver's command monitoring.
//!
//! On a single server, `majority` means the primary alone, so use `journal: true` on the database
//! when a crash must not lose a counter update (see [gaps](super::guarantees#gaps)).
