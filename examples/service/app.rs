//! The example service: tickets numbered per project, gapless invoices, and what the
//! `seqid::Sequences` handle holds, over HTTP with axum.
//!
//! One module, included by the example's `main` (`examples/service/main.rs`), by the
//! benchmark's `service` part and by `tests/service.rs`, so that the test and the load
//! generator start exactly the service the example runs: [`App::router`] builds it from
//! the state, [`serve`] runs it until a shutdown signal.
//!
//! Routes:
//!
//! - `POST /projects/{project}/tickets` `{"title": "...", "request": "..."}` → 201 with the
//!   ticket, numbered per project from 1000 (a field sequence scoped by project, block
//!   strategy).
//! - `POST /tickets` `{"project": "apollo" | 42, "title": "...", "request": "..."}` → the
//!   same, the project named in the body (as a form or an import sends it). The JSON
//!   value goes to seqid as it comes, so seqid is the one to refuse a value that names no
//!   scope (`1.5`): 422 with its message.
//! - `GET /projects/{project}/tickets/{number}` → the ticket, or 404.
//! - `POST /invoices` `{"customer": "...", "amount_cents": 1200, "request": "..."}` → 201
//!   with a gapless invoice number, taken in a transaction
//!   (`Transaction::new(&mut session).run(...)`).
//! - `GET /invoices/{number}` → the invoice, or 404.
//! - `GET /sequences` → what the handle holds: `seqid::Stats` per sequence, and every counter
//!   of each (`list_counters`).
//!
//! Errors are JSON `{"error": "..."}` with a 4xx for what the client sent (seqid's own
//! message when seqid refused it) and a 5xx for what went wrong on this side; no input
//! makes the service panic. See [`ApiError`] for the status of each `seqid::Error`.
#![allow(dead_code)] // the example, the benchmark and the test each use their own part

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::extract::rejection::JsonRejection;
use axum::extract::{DefaultBodyLimit, Path, Request, State};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures_util::FutureExt;
use mongodb::bson::oid::ObjectId;
use mongodb::bson::{Bson, Document as BsonDocument, doc};
use mongodb::error::{ErrorKind, WriteFailure};
use mongodb::options::ReturnDocument;
use seqid::Document;
use seqid::action::Transaction;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::RwLock;
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;

/// A ticket, numbered per project from 1000 (`ticket` sequence, one counter per project).
///
/// The block strategy: through the handle, each project's live block of 100 numbers is
/// shared by every request, so a ticket costs one `insert` round trip and a hundredth of
/// an `$inc`. `project` is a `Bson` value because a project is a name or a number, and a
/// body may send something else, which seqid refuses (see [`create_ticket_in_body`]).
#[derive(Debug, Serialize, Deserialize, Document)]
#[seq_id(collection = "tickets")]
pub struct Ticket {
    /// Filled by `insert` (a new `ObjectId`); tickets are found by (project, number).
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    pub id: Option<ObjectId>,
    /// The project's name (a string) or number (an integer).
    pub project: Bson,
    /// 1000, 1001, ... in each project; 0 until `insert` fills it.
    #[seq_id("ticket", scope = "project", start = 1000, strategy = "block")]
    pub number: i64,
    /// What the ticket is about.
    pub title: String,
    /// The client's id for this request: the load generator and the test find each
    /// acknowledged ticket by it, and check that none is stored twice.
    pub request: String,
}

/// A ticket as the service stores it with no sequence ([`Mode::ObjectId`]): keyed by an
/// ObjectId the driver's way, numbered nothing.
#[derive(Debug, Serialize, Deserialize)]
pub struct PlainTicket {
    #[serde(rename = "_id")]
    pub id: ObjectId,
    pub project: Bson,
    pub title: String,
    pub request: String,
}

/// The collection of [`PlainTicket`]s.
pub const PLAIN_TICKETS: &str = "plain_tickets";

/// An invoice: gapless numbers 1, 2, 3, ..., committed with the document or not at all.
#[derive(Debug, Serialize, Deserialize, Document)]
#[seq_id("invoice", collection = "invoices", strategy = "gapless")]
pub struct Invoice {
    /// The invoice number, 0 until `insert` fills it (inside the transaction).
    #[serde(rename = "_id")]
    pub number: i64,
    /// Who pays.
    pub customer: String,
    /// How much, in cents.
    pub amount_cents: i64,
    /// The client's id for this request (see [`Ticket::request`]).
    pub request: String,
}

/// How the service numbers what it stores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// With seqid, through the application's `Sequences` handle (the default).
    Seqid,
    /// With the tutorial's two calls by hand: `find_one_and_update` `$inc` (upsert,
    /// return-after) on a counter document, then `insert_one`. The yardstick the load
    /// generator compares seqid with: same routes, same documents, same layers.
    ByHand,
    /// No sequence at all: the same ticket stored with the driver's `insert_one` under an
    /// ObjectId `_id` ([`PlainTicket`], in `plain_tickets`), numbered nothing. What a
    /// service author weighs ids against: the price of a number is seqid's requests per
    /// second over these. Tickets only: invoices need their number (404 here).
    ObjectId,
}

impl Mode {
    /// A short name, for tables and logs.
    pub fn label(self) -> &'static str {
        match self {
            Mode::Seqid => "seqid",
            Mode::ByHand => "by hand",
            Mode::ObjectId => "ObjectId",
        }
    }
}

/// The layers' settings.
#[derive(Clone, Debug)]
pub struct Config {
    /// A request not answered within this is answered 408 and its handler dropped
    /// (cancelled: seqid's inserts survive that, see the README's "Cancelled calls").
    pub request_timeout: Duration,
    /// Bodies above this many bytes are refused with 413 before they are read.
    pub body_limit: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            request_timeout: Duration::from_secs(10),
            body_limit: 16 * 1024,
        }
    }
}

/// The application state: one `seqid::Database` from the application's one `Sequences`
/// handle (cloning it clones a handle to the same state, as cloning a `mongodb::Client`).
#[derive(Clone)]
pub struct App {
    db: seqid::Database,
    mode: Mode,
    /// Invoice transactions hold a read guard while they run in their own task; `drain`
    /// takes the write lock, so it waits for all of them to commit or abort.
    transactions: Arc<RwLock<()>>,
    /// Handlers dropped before they answered: the client hung up, or the request timed
    /// out. The test checks that hang-ups really cancel handlers.
    cancelled: Arc<AtomicU64>,
}

impl App {
    /// The service over the database `name` of the handle's deployment.
    pub fn new(sequences: &seqid::Sequences, name: &str, mode: Mode) -> App {
        App {
            db: sequences.database(name),
            mode,
            transactions: Arc::new(RwLock::new(())),
            cancelled: Arc::new(AtomicU64::new(0)),
        }
    }

    /// The database it writes to (derefs to `mongodb::Database`).
    pub fn db(&self) -> &seqid::Database {
        &self.db
    }

    /// Creates the indexes the service relies on; cheap, so run at every start. The
    /// unique `{ project: 1, number: 1 }` index refuses a second ticket under a number,
    /// whoever writes it (the by-hand mode relies on it too).
    pub async fn prepare(&self) -> Result<(), seqid::Error> {
        Ticket::create_indexes(&self.db).await?;
        Ok(())
    }

    /// The router: the routes, the state, and the layers (outermost first): a trace span
    /// per request, the request timeout, the body limit, and the count of handlers
    /// cancelled before they answered.
    pub fn router(&self, config: &Config) -> Router {
        Router::new()
            .route("/projects/{project}/tickets", post(create_ticket))
            .route("/tickets", post(create_ticket_in_body))
            .route("/projects/{project}/tickets/{number}", get(find_ticket))
            .route("/invoices", post(create_invoice))
            .route("/invoices/{number}", get(find_invoice))
            .route("/sequences", get(sequences))
            .layer(middleware::from_fn_with_state(
                self.clone(),
                count_cancelled,
            ))
            .layer(DefaultBodyLimit::max(config.body_limit))
            .layer(TimeoutLayer::with_status_code(
                StatusCode::REQUEST_TIMEOUT,
                config.request_timeout,
            ))
            .layer(TraceLayer::new_for_http())
            .with_state(self.clone())
    }

    /// Handlers dropped before they answered, so far.
    pub fn cancelled(&self) -> u64 {
        self.cancelled.load(Ordering::Relaxed)
    }

    /// Waits until every invoice transaction started so far has committed or aborted,
    /// including those whose client hung up. Call it after [`serve`] returns.
    pub async fn drain(&self) {
        drop(self.transactions.write().await);
    }
}

/// Serves `router` on `listener` until `shutdown` completes, then stops accepting and
/// waits for the requests in progress (graceful shutdown). The example passes ctrl-c
/// (and SIGTERM); the test and the load generator a channel of their own.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, router)
        .with_graceful_shutdown(shutdown)
        .await
}

// ---------------------------------------------------------------------------
// Errors

/// An error answer: a status and a message, sent as `{"error": message}`.
///
/// `seqid::Error` maps by who is at fault:
///
/// - the request: `InvalidScope`, `InvalidOption`, `IdAlreadySet` → 422 (the JSON was
///   well formed, but names no scope or sets what seqid fills in), `Refused` → 422 (the
///   server's validation refused the document), `DuplicateKey` → 409;
/// - nobody knows yet: `OutcomeUnknown` → 503 (the ticket may be stored; the message says
///   so, and a retry stores a new ticket, so a client that must not duplicate looks it
///   up by its request id first), and `TransactionOutcomeUnknown` → 503 (the invoice's
///   transaction committed whole or not at all: looked up by its request id the same way);
/// - the database or the server side: `Driver` → 503, everything else (`CounterNotNumeric`,
///   `Overflow`, `MissingIndex`, ...) → 500, logged.
///
/// The message is always seqid's own, which names the sequence and the value at fault.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    message: String,
}

impl ApiError {
    fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
        }
    }

    fn driver(error: mongodb::error::Error) -> ApiError {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            format!("the database failed: {error}"),
        )
    }
}

impl From<seqid::Error> for ApiError {
    fn from(error: seqid::Error) -> ApiError {
        let status = match error.kind() {
            _ if error.is_invalid_input() => StatusCode::UNPROCESSABLE_ENTITY,
            seqid::error::ErrorKind::Refused { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            seqid::error::ErrorKind::DuplicateKey { .. } => StatusCode::CONFLICT,
            _ if error.is_outcome_unknown() || error.driver_error().is_some() => {
                StatusCode::SERVICE_UNAVAILABLE
            }
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        ApiError::new(status, error.to_string())
    }
}

impl From<JsonRejection> for ApiError {
    /// axum's own status for a body it cannot read (400 malformed, 413 too large, 415 not
    /// JSON, 422 wrong fields), with its message.
    fn from(rejection: JsonRejection) -> ApiError {
        ApiError::new(rejection.status(), rejection.body_text())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        if self.status.is_server_error() {
            tracing::error!(status = %self.status, "{}", self.message);
        } else {
            tracing::debug!(status = %self.status, "{}", self.message);
        }
        (self.status, Json(json!({ "error": self.message }))).into_response()
    }
}

// ---------------------------------------------------------------------------
// Projects

/// A project: a name (a letter, then up to 63 letters, digits, `-` or `_`), or a number
/// (digits only). Names start with a letter so that no name reads as a number.
fn project_in_path(text: &str) -> Result<Bson, ApiError> {
    if !text.is_empty() && text.len() <= 18 && text.bytes().all(|b| b.is_ascii_digit()) {
        // 18 digits always fit an i64.
        return Ok(Bson::Int64(text.parse().unwrap_or_default()));
    }
    project_name(text)
}

fn project_name(text: &str) -> Result<Bson, ApiError> {
    let mut bytes = text.bytes();
    let valid = text.len() <= 64
        && bytes.next().is_some_and(|b| b.is_ascii_alphabetic())
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if valid {
        Ok(Bson::String(text.to_owned()))
    } else {
        Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            format!(
                "project {text:?}: a project is a name (a letter, then up to 63 letters, \
                 digits, `-` or `_`) or a number (digits)"
            ),
        ))
    }
}

/// A project named in a JSON body: a string is a name, checked as in a path; a number
/// goes to seqid as it comes (an integer is a scope, a fraction is refused by seqid:
/// 422 with its message); anything else is not a project.
fn project_in_body(value: &Value) -> Result<Bson, ApiError> {
    match value {
        Value::String(name) => project_name(name),
        Value::Number(number) => Ok(match (number.as_i64(), number.as_f64()) {
            (Some(integer), _) => Bson::Int64(integer),
            (None, Some(float)) => Bson::Double(float),
            (None, None) => Bson::String(number.to_string()),
        }),
        other => Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("project {other}: a project is a name or a number"),
        )),
    }
}

// ---------------------------------------------------------------------------
// Tickets

/// The body of `POST /projects/{project}/tickets`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewTicket {
    title: String,
    request: String,
}

/// The body of `POST /tickets`: the project too.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewTicketIn {
    project: Value,
    title: String,
    request: String,
}

/// A ticket as the API shows it.
#[derive(Debug, Serialize)]
pub struct TicketView {
    project: Value,
    number: i64,
    title: String,
    request: String,
}

impl From<Ticket> for TicketView {
    fn from(ticket: Ticket) -> TicketView {
        TicketView {
            project: ticket.project.into_relaxed_extjson(),
            number: ticket.number,
            title: ticket.title,
            request: ticket.request,
        }
    }
}

/// `POST /projects/{project}/tickets`.
async fn create_ticket(
    State(app): State<App>,
    Path(project): Path<String>,
    body: Result<Json<NewTicket>, JsonRejection>,
) -> Result<(StatusCode, Json<TicketView>), ApiError> {
    let Json(body) = body?;
    let project = project_in_path(&project)?;
    file_ticket(&app, project, body.title, body.request).await
}

/// `POST /tickets`.
async fn create_ticket_in_body(
    State(app): State<App>,
    body: Result<Json<NewTicketIn>, JsonRejection>,
) -> Result<(StatusCode, Json<TicketView>), ApiError> {
    let Json(body) = body?;
    let project = project_in_body(&body.project)?;
    file_ticket(&app, project, body.title, body.request).await
}

/// Numbers and stores a ticket.
///
/// Called in the handler itself: if the client hangs up, hyper drops this future. With
/// seqid that is safe (a drop before the number is filled in costs nothing, the number
/// going to the next caller; a drop after it lets the write run to its end in a task of
/// seqid's own). The by-hand mode calls the driver here too, as the tutorial's code in
/// a handler does, and meets what the README's "Cancelled calls" describes.
async fn file_ticket(
    app: &App,
    project: Bson,
    title: String,
    request: String,
) -> Result<(StatusCode, Json<TicketView>), ApiError> {
    let mut ticket = Ticket {
        id: None,
        project,
        number: 0,
        title,
        request,
    };
    match app.mode {
        Mode::Seqid => {
            ticket.insert(&app.db).await?;
        }
        Mode::ByHand => ticket.number = by_hand::insert_ticket(&app.db, &ticket).await?,
        // Numbered nothing: the answer's number is 0.
        Mode::ObjectId => {
            let plain = PlainTicket {
                id: ObjectId::new(),
                project: ticket.project.clone(),
                title: ticket.title.clone(),
                request: ticket.request.clone(),
            };
            app.db
                .collection::<PlainTicket>(PLAIN_TICKETS)
                .insert_one(&plain)
                .await
                .map_err(ApiError::driver)?;
        }
    }
    Ok((StatusCode::CREATED, Json(ticket.into())))
}

/// `GET /projects/{project}/tickets/{number}`.
async fn find_ticket(
    State(app): State<App>,
    Path((project, number)): Path<(String, String)>,
) -> Result<Json<TicketView>, ApiError> {
    let project = project_in_path(&project)?;
    let number = parse_number(&number)?;
    match Ticket::sequence()
        .find(&app.db, number)
        .scope(&project)
        .await?
    {
        Some(ticket) => Ok(Json(ticket.into())),
        None => Err(ApiError::new(
            StatusCode::NOT_FOUND,
            format!("no ticket {number} in project {project}"),
        )),
    }
}

fn parse_number(text: &str) -> Result<i64, ApiError> {
    text.parse()
        .map_err(|_| ApiError::new(StatusCode::BAD_REQUEST, format!("{text:?} is not a number")))
}

// ---------------------------------------------------------------------------
// Invoices

/// The body of `POST /invoices`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewInvoice {
    customer: String,
    amount_cents: i64,
    request: String,
}

/// An invoice as the API shows it (`number`, where the document has `_id`).
#[derive(Debug, Serialize)]
pub struct InvoiceView {
    number: i64,
    customer: String,
    amount_cents: i64,
    request: String,
}

impl From<Invoice> for InvoiceView {
    fn from(invoice: Invoice) -> InvoiceView {
        InvoiceView {
            number: invoice.number,
            customer: invoice.customer,
            amount_cents: invoice.amount_cents,
            request: invoice.request,
        }
    }
}

/// `POST /invoices`: a gapless number, in a transaction.
///
/// The transaction runs in a task of its own, and the handler awaits its `JoinHandle`.
/// If the client hangs up (or the request times out), hyper drops the handler, which
/// drops only the `JoinHandle`: the transaction still commits or aborts as a whole, and
/// its session is ended cleanly. Run in the handler itself, a hang-up would drop the
/// driver's futures mid-way with the session (seqid's operations inside the caller's
/// session cannot leave the caller): the driver would abort the transaction when it
/// notices, after a dropped command whose connection it closes; the README advises this
/// spawn for the driver's own calls under cancellation. The task holds a read guard of
/// `App::transactions`, so that shutdown can wait for it ([`App::drain`]).
async fn create_invoice(
    State(app): State<App>,
    body: Result<Json<NewInvoice>, JsonRejection>,
) -> Result<(StatusCode, Json<InvoiceView>), ApiError> {
    let Json(body) = body?;
    let running = app.transactions.clone().read_owned().await;
    let task = tokio::spawn(async move {
        let _running = running;
        match app.mode {
            Mode::Seqid => seqid_invoice(&app.db, body).await,
            Mode::ByHand => by_hand::invoice(&app.db, body).await,
            Mode::ObjectId => Err(ApiError::new(
                StatusCode::NOT_FOUND,
                "the ObjectId mode numbers nothing, and stores tickets only",
            )),
        }
    });
    match task.await {
        Ok(invoice) => Ok((StatusCode::CREATED, Json(invoice?.into()))),
        Err(error) => Err(ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("the invoice's task failed: {error}"),
        )),
    }
}

/// The seqid way: `insert` with the session, in `Transaction::new(...).run(...)`, which
/// runs the body again after a write conflict (the invoices of this process take turns on
/// the counter without one; another process's may still conflict), sends a commit whose
/// result is unknown again alone, and gives seqid's error back as it is. The invoice is
/// made inside the body, so that a run again starts from an unset number.
async fn seqid_invoice(db: &seqid::Database, body: NewInvoice) -> Result<Invoice, ApiError> {
    let mut session = db
        .client()
        .start_session()
        .await
        .map_err(ApiError::driver)?;
    let invoice = Transaction::new(&mut session)
        .run((db, body), |session, (db, body)| {
            Box::pin(async move {
                let mut invoice = Invoice {
                    number: 0,
                    customer: body.customer.clone(),
                    amount_cents: body.amount_cents,
                    request: body.request.clone(),
                };
                invoice.insert(*db).session(session).await?;
                Ok::<_, seqid::Error>(invoice)
            })
        })
        .await?;
    Ok(invoice)
}

/// `GET /invoices/{number}`.
async fn find_invoice(
    State(app): State<App>,
    Path(number): Path<String>,
) -> Result<Json<InvoiceView>, ApiError> {
    let number = parse_number(&number)?;
    match Invoice::sequence().find(&app.db, number).await? {
        Some(invoice) => Ok(Json(invoice.into())),
        None => Err(ApiError::new(
            StatusCode::NOT_FOUND,
            format!("no invoice {number}"),
        )),
    }
}

// ---------------------------------------------------------------------------
// What the handle holds

/// `GET /sequences`: the handle's `Stats` for each sequence (summed over the scopes it
/// holds; zero in the by-hand mode, which uses no handle), every counter of each
/// (`list_counters`: per project for tickets, the last id reserved, what this process holds
/// of its block, the largest number stored), and how many sequences and scopes the handle
/// holds state for.
async fn sequences(State(app): State<App>) -> Result<Json<Value>, ApiError> {
    let stats = |stats: seqid::Stats| {
        json!({
            "reservations": stats.reservations,
            "ids": stats.ids,
            "retries": stats.retries,
            "unused": stats.unused,
            "in_flight": stats.in_flight,
        })
    };
    let counters = |states: Vec<seqid::CounterState>| {
        let states = states.into_iter().map(|state| {
            json!({
                "scope": mongodb::bson::Bson::from(state.scope.clone()).into_relaxed_extjson(),
                "last_reserved": state.last_reserved,
                "held_here": state.held_here,
                "next_held": state.next_held,
                "largest_stored": state.largest_stored,
                // `{ "project": "apollo" }: last reserved 1099, 58 held here (next 1042), ...`
                "shown": state.to_string(),
            })
        });
        Value::Array(states.collect())
    };
    Ok(Json(json!({
        "mode": app.mode.label(),
        "held": app.db.sequences().held(),
        "cancelled_handlers": app.cancelled(),
        "sequences": {
            "ticket": {
                "strategy": "block",
                "block_size": 100,
                "scope": "project",
                "stats": stats(Ticket::sequence().stats(&app.db)),
                "counters": counters(Ticket::sequence().list_counters(&app.db).await?),
            },
            "invoice": {
                "strategy": "gapless",
                "stats": stats(Invoice::sequence().stats(&app.db)),
                "counters": counters(Invoice::sequence().list_counters(&app.db).await?),
            },
        },
    })))
}

/// Counts handlers dropped before they answered (middleware inside the timeout layer,
/// so both hang-ups and timeouts are seen).
async fn count_cancelled(State(app): State<App>, request: Request, next: Next) -> Response {
    /// Counts on drop, unless disarmed by an answer.
    struct Unanswered(Option<Arc<AtomicU64>>);
    impl Drop for Unanswered {
        fn drop(&mut self) {
            if let Some(cancelled) = &self.0 {
                cancelled.fetch_add(1, Ordering::Relaxed);
                tracing::debug!("handler cancelled before it answered");
            }
        }
    }
    let mut guard = Unanswered(Some(app.cancelled.clone()));
    let response = next.run(request).await;
    guard.0 = None;
    response
}

// ---------------------------------------------------------------------------
// By hand

/// The tutorial's two calls, written by hand: the yardstick.
mod by_hand {
    use super::*;

    /// At most this many null answers or upsert races in a row.
    const ATTEMPTS: usize = 10;

    /// `$inc` on the project's counter, then `insert_one`; the number.
    pub async fn insert_ticket(db: &mongodb::Database, ticket: &Ticket) -> Result<i64, ApiError> {
        // The tutorial's counter `_id` is a name; per project it needs the project in it.
        let counter = match &ticket.project {
            Bson::String(name) => format!("ticket/{name}"),
            Bson::Int64(number) => format!("ticket/{number}"),
            other => {
                return Err(ApiError::new(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    format!("project {other}: not a project (by hand)"),
                ));
            }
        };
        let seq = next(db, &counter).await?;
        // Numbers start at 1000: the first `$inc` of an upserted counter gives 1.
        let number = seq + 999;
        let stored = doc! {
            "project": ticket.project.clone(),
            "number": number,
            "title": &ticket.title,
            "request": &ticket.request,
        };
        match db
            .collection::<BsonDocument>("tickets")
            .insert_one(stored)
            .await
        {
            Ok(_) => Ok(number),
            Err(error) if duplicate_key(&error) => Err(ApiError::new(
                StatusCode::CONFLICT,
                format!("ticket {number}: {error}"),
            )),
            Err(error) => Err(ApiError::driver(error)),
        }
    }

    /// The tutorial's `getNextSequence`: `findAndModify` `$inc: 1`, upsert, return-after.
    ///
    /// Two server quirks are handled by asking again (bounded): a concurrent first use
    /// may fail with E11000, as the manual says; and SecantusDB may answer a concurrent
    /// upsert with null although it applied it (a gap, never a repeat; seqid does the
    /// same).
    async fn next(db: &mongodb::Database, counter: &str) -> Result<i64, ApiError> {
        for _ in 0..ATTEMPTS {
            match increment(db, counter, None).await {
                Ok(Some(counter)) => return seq(&counter),
                Ok(None) => continue,
                Err(error) if duplicate_key(&error) => continue,
                Err(error) => return Err(ApiError::driver(error)),
            }
        }
        Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            format!("the counter {counter} answered null or raced {ATTEMPTS} times in a row"),
        ))
    }

    /// The `$inc` itself, in `session` if given: the counter after it, or `None` when
    /// the server answered null.
    async fn increment(
        db: &mongodb::Database,
        counter: &str,
        session: Option<&mut mongodb::ClientSession>,
    ) -> mongodb::error::Result<Option<BsonDocument>> {
        let counters = db.collection::<BsonDocument>("counters");
        let update = counters
            .find_one_and_update(doc! { "_id": counter }, doc! { "$inc": { "seq": 1 } })
            .upsert(true)
            .return_document(ReturnDocument::After);
        match session {
            Some(session) => update.session(session).await,
            None => update.await,
        }
    }

    fn seq(counter: &BsonDocument) -> Result<i64, ApiError> {
        match counter.get("seq") {
            Some(Bson::Int32(v)) => Ok((*v).into()),
            Some(Bson::Int64(v)) => Ok(*v),
            Some(Bson::Double(v)) if v.fract() == 0.0 => Ok(*v as i64),
            other => Err(ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("the counter holds seq: {other:?}"),
            )),
        }
    }

    const NULL: &str = "the counter's upsert answered null";

    fn null_in_transaction() -> ApiError {
        ApiError::new(StatusCode::SERVICE_UNAVAILABLE, NULL)
    }

    /// The same two calls in the transaction, with the session, in `and_run`, which runs
    /// the callback again after a write conflict (the driver's error keeps its
    /// `TransientTransactionError` label). A null answer cannot be asked again in the
    /// transaction (the `$inc` may be in it already, and would count twice): it aborts
    /// the transaction, and another starts (bounded).
    pub async fn invoice(db: &mongodb::Database, body: NewInvoice) -> Result<Invoice, ApiError> {
        let mut session = db
            .client()
            .start_session()
            .await
            .map_err(ApiError::driver)?;
        for _ in 0..ATTEMPTS {
            let result = session
                .start_transaction()
                .and_run((db, &body), |session, (db, body)| {
                    async move {
                        let counter = increment(db, "invoice", Some(&mut *session)).await?;
                        let Some(counter) = counter else {
                            return Err(mongodb::error::Error::custom(NULL.to_owned()));
                        };
                        let number = seq(&counter)
                            .map_err(|error| mongodb::error::Error::custom(error.message))?;
                        let invoice = Invoice {
                            number,
                            customer: body.customer.clone(),
                            amount_cents: body.amount_cents,
                            request: body.request.clone(),
                        };
                        db.collection::<Invoice>("invoices")
                            .insert_one(&invoice)
                            .session(&mut *session)
                            .await?;
                        Ok(invoice)
                    }
                    .boxed()
                })
                .await;
            match result {
                Err(error) if error.get_custom::<String>().is_some_and(|m| m == NULL) => continue,
                Err(error) => {
                    return Err(match error.get_custom::<String>() {
                        Some(message) => {
                            ApiError::new(StatusCode::SERVICE_UNAVAILABLE, message.clone())
                        }
                        None => ApiError::driver(error),
                    });
                }
                Ok(invoice) => return Ok(invoice),
            }
        }
        Err(null_in_transaction())
    }

    /// Whether the driver's error is a duplicate key (11000).
    pub fn duplicate_key(error: &mongodb::error::Error) -> bool {
        matches!(&*error.kind, ErrorKind::Write(WriteFailure::WriteError(e)) if e.code == 11000)
            || matches!(&*error.kind, ErrorKind::Command(e) if e.code == 11000)
    }
}
