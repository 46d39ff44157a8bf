//! In a service: the repository's `examples/service`.
//!
//! ```sh
//! cargo run --example service   # http://127.0.0.1:3000 (SEQID_SERVICE_ADDR), the server as the tests find it
//! curl -si -X POST localhost:3000/projects/apollo/tickets \
//!      -H 'content-type: application/json' -d '{"title": "Launch", "request": "r1"}'
//! ```
//!
//! ```text
//! 201 {"project":"apollo","number":1000,"title":"Launch","request":"r1"}
//! ```
//!
//! An axum service with one [`Sequences`](crate::Sequences) handle in its state, tower-http's
//! request timeout (408, the handler dropped), a body limit (16 KiB, 413), a trace span per
//! request (`tracing-subscriber`, `RUST_LOG`), and graceful shutdown on ctrl-c or SIGTERM
//! (requests in progress finish, invoice transactions still running end). Its routes:
//!
//! - `POST /projects/{project}/tickets` `{"title", "request"}`: a ticket numbered per project
//!   from 1000 (the `Ticket` of [scopes](super::scopes) with `strategy = "block"`);
//!   `POST /tickets` takes the project in the body, where a value seqid refuses as a scope
//!   (`1.5`) gets 422 with seqid's message; `GET /projects/{project}/tickets/{number}`.
//! - `POST /invoices` `{"customer", "amount_cents", "request"}`: a gapless invoice number, inside
//!   [`Transaction::new(&mut session).run(...)`](crate::action::Transaction);
//!   `GET /invoices/{number}`.
//! - `GET /sequences`: what the handle holds ([`Stats`](crate::Stats) per sequence), and
//!   every counter of each ([`list_counters`](crate::SequenceOf::list_counters): per project, the
//!   last id reserved, what this process holds of its block, the largest number stored).
//!
//! Errors are `{"error": "..."}`: 400, 413, 415 or 422 for what the client sent (seqid's own
//! message when seqid refused it: [`InvalidScope`](crate::error::ErrorKind::InvalidScope) 422,
//! [`DuplicateKey`](crate::error::ErrorKind::DuplicateKey) 409), 503 for
//! [`OutcomeUnknown`](crate::error::ErrorKind::OutcomeUnknown) and driver errors, 500 for the rest; no input
//! makes it panic.
//!
//! The shape of it, with the handle in the state (axum and its extractors are not among seqid's
//! dependencies, so here the handler is a plain function):
//!
//! ```no_run
//! # use seqid::Document;
//! # use serde::{Deserialize, Serialize};
//! # #[derive(Serialize, Deserialize, Document)]
//! # #[seq_id(collection = "tickets")]
//! # struct Ticket {
//! #     project: String,
//! #     #[seq_id("ticket", scope = "project", start = 1000, strategy = "block")]
//! #     number: i64,
//! #     title: String,
//! # }
//! #[derive(Clone)]
//! struct AppState {
//!     db: seqid::Database, // one Sequences handle for the process, cloned into each request
//! }
//!
//! async fn create_ticket(state: AppState, project: String, title: String) -> Result<i64, seqid::Error> {
//!     let mut ticket = Ticket { project, number: 0, title };
//!     ticket.insert(&state.db).await
//! }
//!
//! # async fn run(client: mongodb::Client) -> Result<(), seqid::Error> {
//! let state = AppState { db: seqid::Sequences::new(&client).database("app") };
//! Ticket::create_indexes(&state.db).await?;
//! let number = create_ticket(state.clone(), "apollo".into(), "Launch".into()).await?;
//! # Ok(()) }
//! ```
//!
//! **A hang-up** (the client closes the connection mid-request) makes hyper drop the handler, as
//! the request timeout does. A ticket's `insert` is awaited in the handler: dropped before its
//! number was filled in, it writes nothing and the number goes to the next request; dropped
//! after, the write runs to its end (see [cancelled calls](super::cancellation)). An invoice's
//! transaction runs in a task of its own whose `JoinHandle` the handler awaits, so a hang-up
//! never leaves a transaction half-way: it commits or aborts as a whole. `tests/it/service.rs`
//! runs the service in-process and drives it over HTTP with 32 clients, a quarter of their
//! requests hung up and some timed out, then checks every acknowledged ticket and invoice
//! against what is stored (each once, under its number; invoices exactly `1..=n`), on both test
//! servers. `SEQID_SERVICE_MODE=by-hand` runs the same service with the tutorial's two calls
//! instead of seqid, and `SEQID_SERVICE_MODE=objectid` stores its tickets under an ObjectId
//! with no number at all (invoices refused): the two yardsticks of the benchmark's `--only
//! service`, what the tutorial's code costs and what ids cost.
