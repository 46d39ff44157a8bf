//! [`Transaction`]: a closure run in a transaction of the caller's session, with the
//! driver's retry rules and seqid's typed errors.

use std::time::Duration;

use mongodb::ClientSession;
use mongodb::error::{TRANSIENT_TRANSACTION_ERROR, UNKNOWN_TRANSACTION_COMMIT_RESULT};
use mongodb::options::TransactionOptions;
use tokio::time::Instant;

use crate::base::ending::Ending;
use crate::base::error::{Error, ErrorKind};
use crate::base::future::BoxFuture;
use crate::base::server::noted;

/// An error a transaction's body returns, as [`Transaction::run`] reads it: the driver's
/// error behind it, whose labels say whether the transaction runs again. Implemented for
/// [`seqid::Error`](crate::Error), the driver's error, and `Box<dyn std::error::Error + Send +
/// Sync>` (which finds either in its chain of sources); an application's own error type
/// implements it by pointing at the one it wraps.
///
/// ```
/// #[derive(Debug)]
/// enum AppError {
///     Seqid(seqid::Error),
///     Driver(mongodb::error::Error),
///     Rejected(&'static str),
/// }
///
/// impl From<seqid::Error> for AppError {
///     fn from(error: seqid::Error) -> Self {
///         AppError::Seqid(error)
///     }
/// }
///
/// impl seqid::action::Labelled for AppError {
///     fn driver_error(&self) -> Option<&mongodb::error::Error> {
///         match self {
///             AppError::Seqid(error) => error.driver_error(),
///             AppError::Driver(error) => Some(error),
///             AppError::Rejected(_) => None,
///         }
///     }
/// }
/// ```
pub trait Labelled {
    /// The driver's error behind this one, if any.
    fn driver_error(&self) -> Option<&mongodb::error::Error>;
}

impl Labelled for Error {
    fn driver_error(&self) -> Option<&mongodb::error::Error> {
        Error::driver_error(self)
    }
}

impl Labelled for mongodb::error::Error {
    fn driver_error(&self) -> Option<&mongodb::error::Error> {
        Some(self)
    }
}

impl Labelled for Box<dyn std::error::Error + Send + Sync> {
    fn driver_error(&self) -> Option<&mongodb::error::Error> {
        let mut error: Option<&(dyn std::error::Error + 'static)> = Some(self.as_ref());
        while let Some(at) = error {
            if let Some(driver) = at.downcast_ref::<mongodb::error::Error>() {
                return Some(driver);
            }
            if let Some(seqid) = at.downcast_ref::<Error>() {
                return seqid.driver_error();
            }
            error = at.source();
        }
        None
    }
}

/// Runs a closure in a transaction of the caller's session: the way to run gapless
/// numbers, and anything else seqid does in a transaction (the guide's
/// [transactions](crate::guide::transactions)). Its own failures (starting it, committing
/// it) serve no one sequence: their [`Error::sequence`] is `None`.
///
/// The rules are MongoDB's for the callback API (and the driver's `and_run`): an error
/// labelled `TransientTransactionError` (a write conflict: another transaction took the
/// gapless counter or the natural key first) aborts the transaction and runs the whole of it
/// again, after a short random backoff; a commit answered `UnknownTransactionCommitResult`
/// (its answer lost, or a failover under it) sends the commit alone again, never the
/// transaction, whose work may be committed already; any other error aborts the transaction
/// and comes back as it is. Restarting the transaction on an unknown commit result, as a
/// hand-written loop easily does, runs the body again after its first run may have
/// committed: a `find_or_insert` that inserted answers `Found` the second time, and the
/// caller loses the fact that it won. Each rule applies for at most the time limit (120 s,
/// the driver's), after which the last error comes back; a commit still unknown then is
/// [`ErrorKind::TransactionOutcomeUnknown`].
///
/// The driver's `and_run` applies the same rules but returns the driver's error, in which a
/// seqid error travels as a custom payload; this returns the body's own error type, a
/// [`seqid::Error`](crate::Error) included, so that `DraftNotFound` or
/// `InvalidNaturalKey` is matched as it is.
///
/// ```no_run
/// use mongodb::bson::doc;
/// use seqid::action::Transaction;
/// use seqid::{Document, Numbered};
/// # #[derive(serde::Serialize, serde::Deserialize, Document)]
/// # #[seq_id(collection = "invoices")]
/// # struct Invoice { #[serde(rename = "_id", skip_serializing_if = "Option::is_none")] id: Option<mongodb::bson::oid::ObjectId>,
/// #   #[seq_id("invoice", strategy = "gapless", numbered = "later")] number: Option<i64>, status: String }
///
/// # async fn run(db: seqid::Database, id: mongodb::bson::oid::ObjectId) -> Result<(), Box<dyn std::error::Error>> {
/// let mut session = db.client().start_session().await?;
/// let issued: Numbered<Invoice> = Transaction::new(&mut session)
///     .run(&db, |session, db| {
///         Box::pin(async move {
///             Invoice::number_draft(*db, doc! { "_id": id })
///                 .set(doc! { "status": "issued" })
///                 .session(session)
///                 .await
///         })
///     })
///     .await?;
/// # Ok(()) }
/// ```
#[must_use = "a transaction does nothing until it is run"]
pub struct Transaction<'a> {
    session: &'a mut ClientSession,
    options: Option<TransactionOptions>,
    time_limit: Duration,
}

impl<'a> Transaction<'a> {
    /// How long a transaction is run again, or its commit sent again, by default: the
    /// driver's limit for its callback API.
    ///
    /// ```
    /// assert_eq!(seqid::action::Transaction::DEFAULT_TIME_LIMIT.as_secs(), 120);
    /// ```
    pub const DEFAULT_TIME_LIMIT: Duration = Duration::from_secs(120);

    /// A transaction of `session`, to [`run`](Transaction::run); the session's options and
    /// a time limit of [`DEFAULT_TIME_LIMIT`](Transaction::DEFAULT_TIME_LIMIT) unless set.
    ///
    /// ```no_run
    /// # use seqid::Document;
    /// # #[derive(serde::Serialize, Document)]
    /// # #[seq_id("invoice", collection = "invoices", strategy = "gapless")]
    /// # struct Invoice { #[serde(rename = "_id")] id: i64 }
    /// # async fn run(db: seqid::Database) -> Result<(), Box<dyn std::error::Error>> {
    /// use seqid::action::Transaction;
    ///
    /// let mut session = db.client().start_session().await?;
    /// let id = Transaction::new(&mut session)
    ///     .run(&db, |session, db| {
    ///         Box::pin(async move { Invoice { id: 0 }.insert(*db).session(session).await })
    ///     })
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub fn new(session: &'a mut ClientSession) -> Self {
        Transaction {
            session,
            options: None,
            time_limit: Self::DEFAULT_TIME_LIMIT,
        }
    }

    /// The transaction's options (read and write concern, read preference, the commit's
    /// longest time), as the driver's `start_transaction().with_options(...)` takes them;
    /// the session's defaults otherwise.
    ///
    /// ```no_run
    /// # use seqid::Document;
    /// # #[derive(serde::Serialize, Document)]
    /// # #[seq_id("invoice", collection = "invoices", strategy = "gapless")]
    /// # struct Invoice { #[serde(rename = "_id")] id: i64 }
    /// # async fn run(db: seqid::Database, mut session: mongodb::ClientSession) -> Result<(), seqid::Error> {
    /// use mongodb::options::{TransactionOptions, WriteConcern};
    /// use seqid::action::Transaction;
    ///
    /// let options = TransactionOptions::builder().write_concern(WriteConcern::majority()).build();
    /// let id = Transaction::new(&mut session)
    ///     .options(options)
    ///     .run(&db, |session, db| {
    ///         Box::pin(async move {
    ///             let mut invoice = Invoice { id: 0 };
    ///             invoice.insert(*db).session(session).await
    ///         })
    ///     })
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub fn options(mut self, options: TransactionOptions) -> Self {
        self.options = Some(options);
        self
    }

    /// How long the transaction is run again after transient errors, and its commit sent
    /// again while its result is unknown; [`DEFAULT_TIME_LIMIT`](Transaction::DEFAULT_TIME_LIMIT) (120 s, the
    /// driver's) unless set. A request handler with a deadline of its own sets a shorter
    /// one.
    ///
    /// ```no_run
    /// # use seqid::Document;
    /// # #[derive(serde::Serialize, Document)]
    /// # #[seq_id("invoice", collection = "invoices", strategy = "gapless")]
    /// # struct Invoice { #[serde(rename = "_id")] id: i64 }
    /// # async fn run(db: seqid::Database, mut session: mongodb::ClientSession) -> Result<(), seqid::Error> {
    /// use seqid::action::Transaction;
    ///
    /// let id = Transaction::new(&mut session)
    ///     .time_limit(std::time::Duration::from_secs(5))
    ///     .run(&db, |session, db| {
    ///         Box::pin(async move {
    ///             let mut invoice = Invoice { id: 0 };
    ///             invoice.insert(*db).session(session).await
    ///         })
    ///     })
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub fn time_limit(mut self, limit: Duration) -> Self {
        self.time_limit = limit;
        self
    }

    /// Runs `body` in a transaction, and commits it; again as [`Transaction`] says.
    /// `body` gets the session and `context` (what it works with, borrowed for each run:
    /// a closure's own captures cannot be lent to the future it returns), and makes its
    /// documents itself, so that a run again starts from unset ids. Its error type is the
    /// caller's: [`seqid::Error`](crate::Error), or any [`Labelled`] error that a
    /// `seqid::Error` converts into, which the transaction's own failures become.
    ///
    /// A body that commits or aborts the transaction itself ends it: its value is
    /// returned as it is. The future holds the session: awaited in a task of its own
    /// (`tokio::spawn`), a request that goes away does not cut the transaction mid-way
    /// (see the guide's [cancellation](crate::guide::cancellation)). Cut during its commit
    /// or its abort, before the server answered, it ends the transaction on the server
    /// (`killSessions` of the session, in a task of its own): the driver, which marks the
    /// transaction ended before it sends the command, would otherwise leave it open,
    /// holding the counter against every writer for the transaction's lifetime (60 s).
    pub async fn run<C, R, E, F>(self, mut context: C, mut body: F) -> Result<R, E>
    where
        F: for<'b> FnMut(&'b mut ClientSession, &'b mut C) -> BoxFuture<'b, Result<R, E>>,
        E: From<Error> + Labelled,
    {
        let (session, options, time_limit) = (self.session, self.options, self.time_limit);
        let started = Instant::now();
        // Whether there is time left for another run after a pause of `pause`.
        let time_for = |pause: Duration| started.elapsed() + pause < time_limit;
        let mut runs = 0u32;
        'transaction: loop {
            runs += 1;
            session
                .start_transaction()
                .with_options(options.clone())
                .await
                .map_err(|error| {
                    E::from(Error::driver(None, "starting a transaction", noted(error)))
                })?;
            let value = match body(&mut *session, &mut context).await {
                Ok(value) => value,
                Err(error) => {
                    // Nothing to abort when the body's error ended the transaction (the
                    // driver then knows) or the body ended it itself; the driver's answer
                    // to an abort with nothing to do is ignored, as `and_run` does.
                    let ending = Ending::watch(session);
                    let _ = session.abort_transaction().await;
                    ending.answered();
                    let transient = error
                        .driver_error()
                        .is_some_and(|e| e.contains_label(TRANSIENT_TRANSACTION_ERROR));
                    let pause = backoff(runs);
                    if !(transient && time_for(pause)) {
                        return Err(error);
                    }
                    tracing::debug!(
                        runs,
                        "seqid: a transient error in the transaction; running it again"
                    );
                    tokio::time::sleep(pause).await;
                    continue 'transaction;
                }
            };
            if !crate::base::session::in_transaction(session).await {
                // The body committed or aborted it.
                return Ok(value);
            }
            let mut commits = 0u32;
            loop {
                commits += 1;
                let ending = Ending::watch(session);
                let committed = session.commit_transaction().await;
                ending.answered();
                let Err(error) = committed else {
                    return Ok(value);
                };
                let unknown = error.contains_label(UNKNOWN_TRANSACTION_COMMIT_RESULT)
                    && !max_time_expired(&error);
                if unknown {
                    if !time_for(Duration::ZERO) {
                        return Err(Error::unsequenced(ErrorKind::TransactionOutcomeUnknown {
                            commits,
                            elapsed: started.elapsed(),
                            source: Box::new(error),
                        })
                        .into());
                    }
                    tracing::debug!(
                        commits,
                        "seqid: the commit's result is unknown; sending the commit alone again"
                    );
                    continue;
                }
                let pause = backoff(runs);
                if error.contains_label(TRANSIENT_TRANSACTION_ERROR) && time_for(pause) {
                    tokio::time::sleep(pause).await;
                    continue 'transaction;
                }
                return Err(Error::driver(None, "committing the transaction", noted(error)).into());
            }
        }
    }
}

/// The pause before the transaction's run `runs + 1`: random, up to 5 ms × 1.5^runs and
/// at most 500 ms, as the driver's `and_run` waits.
fn backoff(runs: u32) -> Duration {
    let jitter: f64 = rand::random();
    let most = (5.0 * 1.5_f64.powi(runs as i32)).min(500.0);
    Duration::from_secs_f64(jitter * most / 1000.0)
}

/// Whether the commit's error is the server's time limit (`MaxTimeMSExpired`, code 50),
/// which the callback API does not send again: the limit would expire again.
fn max_time_expired(error: &mongodb::error::Error) -> bool {
    crate::base::server::server_code(error) == Some(50)
}
