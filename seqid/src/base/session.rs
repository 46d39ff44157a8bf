//! The caller's session, as the runtime uses it: which operations join it, and whether a
//! transaction is running in it.

use mongodb::ClientSession;
use mongodb::bson::Document as BsonDocument;
use mongodb::error::ErrorKind;

/// The caller's session, if any, and whether a transaction is running in it.
pub(crate) struct Session<'a> {
    session: Option<&'a mut ClientSession>,
    transaction: bool,
    /// Whether this call has had an answer in the caller's transaction (see
    /// [`Session::answered`]).
    answered: bool,
}

impl<'a> Session<'a> {
    /// No session: every operation runs on its own.
    pub(crate) fn none() -> Self {
        Session {
            session: None,
            transaction: false,
            answered: false,
        }
    }

    /// The caller's session, looking whether a transaction is running in it.
    pub(crate) async fn of(session: Option<&'a mut ClientSession>) -> Session<'a> {
        let Some(session) = session else {
            return Session::none();
        };
        Session {
            transaction: in_transaction(session).await,
            session: Some(session),
            answered: false,
        }
    }

    /// The session, for an operation that joins it.
    pub(crate) fn join(&mut self) -> Option<&mut ClientSession> {
        self.session.as_deref_mut()
    }

    /// Whether the caller's transaction is running: writes join it, and a failed write
    /// aborts it, so nothing is retried or looked up inside it.
    pub(crate) fn in_transaction(&self) -> bool {
        self.transaction
    }

    /// Whether a command of this call has been answered in the caller's transaction: the
    /// driver then knows the transaction has begun on the server, and aborts it when the
    /// session is dropped (or told to). Before that answer it does not: a transaction
    /// whose first command was cancelled in flight is left to the server, which keeps
    /// what that command locked until the transaction's lifetime runs out (60 s by
    /// default). Whether the caller's own commands came first, the driver does not say.
    pub(crate) fn answered(&self) -> bool {
        self.answered
    }

    /// Records that a command of this call was answered in the caller's transaction (a
    /// read of the documents `find_or_insert` and `number_draft` look at, or of a gapless
    /// counter), so that a gapless `$inc` after it needs no read of its own first.
    pub(crate) fn mark_answered(&mut self) {
        self.answered = true;
    }

    /// The id of the caller's session if a transaction is running in it: what a gapless
    /// id reserved in that transaction remembers, and what its insert must run in.
    pub(crate) fn transaction_session(&self) -> Option<&BsonDocument> {
        let session = self.session.as_deref().filter(|_| self.transaction)?;
        Some(session.id())
    }
}

/// Whether a transaction is running in `session`. The driver does not say, but starting
/// one tells: it refuses with "transaction already in progress", without a round trip.
/// A transaction started here has sent nothing, and aborting it sends nothing either: the
/// next operation of the session runs as it would have (the driver resets an aborted
/// transaction's state then).
pub(crate) async fn in_transaction(session: &mut ClientSession) -> bool {
    match session.start_transaction().await {
        Ok(()) => {
            // Cannot fail for a transaction that has sent nothing; if it did, the
            // session would still be usable for what follows.
            let _ = session.abort_transaction().await;
            false
        }
        Err(error) => matches!(
            &*error.kind,
            ErrorKind::Transaction { message, .. } if message.contains("in progress")
        ),
    }
}
