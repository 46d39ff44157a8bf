//! The caller's session, as the runtime uses it: which operations join it, and whether a
//! transaction is running in it.

use std::fmt::{self, Write};

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

    /// The caller's transaction, if one is running: what a gapless id reserved in it
    /// remembers, and what its insert must run in.
    pub(crate) fn transaction(&self) -> Option<Transaction> {
        let session = self.session.as_deref().filter(|_| self.transaction)?;
        Some(Transaction {
            lsid: session.id().clone(),
            number: txn_number(session),
        })
    }
}

/// One transaction of one session, as the server tells them apart: the session's id and
/// the transaction's number in it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Transaction {
    lsid: BsonDocument,
    /// `None` if the driver no longer shows it (see [`txn_number`]): the session alone
    /// then tells the transactions apart.
    number: Option<i64>,
}

/// The number of the session's current transaction. The driver keeps it to itself
/// (`ClientSession::txn_number` is the crate's own) but shows it in the session's `Debug`
/// text, as `txn_number: <n>` in its server session, written before the client; the text
/// is read up to there and no further. `None` if a driver's text no longer holds it
/// (a unit test below holds the driver seqid builds with to it).
fn txn_number(session: &ClientSession) -> Option<i64> {
    let mut reader = Reader::default();
    // An `Err` is the reader stopping once it has the number (or has read enough).
    let _ = write!(reader, "{session:?}");
    reader.number
}

/// Reads a `Debug` text up to `txn_number: <n>`.
#[derive(Default)]
struct Reader {
    seen: String,
    number: Option<i64>,
}

const TXN_NUMBER: &str = "txn_number: ";

impl Write for Reader {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        self.seen.push_str(text);
        if let Some(at) = self.seen.find(TXN_NUMBER) {
            let rest = &self.seen[at + TXN_NUMBER.len()..];
            if let Some(end) = rest.find(|c: char| !c.is_ascii_digit() && c != '-') {
                self.number = rest[..end].parse().ok();
                return Err(fmt::Error);
            }
        }
        // The server session comes before the client: past this, it is not there.
        match self.seen.len() > 1 << 16 {
            true => Err(fmt::Error),
            false => Ok(()),
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reader_stops_at_the_transaction_number() {
        let mut reader = Reader::default();
        let text = "ClientSession { cluster_time: None, server_session: ServerSession { id: \
                    Document({}), dirty: false, txn_number: 42 }, client: Client { .. } }";
        let _ = reader.write_str(text);
        assert_eq!(reader.number, Some(42));
        let mut none = Reader::default();
        let _ = none.write_str("ClientSession { other: 1 }");
        assert_eq!(none.number, None);
    }

    #[tokio::test]
    async fn the_driver_shows_the_transaction_number() {
        // No server needed: a session of a client that never connects.
        let client = mongodb::Client::with_uri_str(
            "mongodb://127.0.0.1:1/?directConnection=true&serverSelectionTimeoutMS=1",
        )
        .await
        .unwrap();
        let Ok(session) = client.start_session().await else {
            return; // this driver selects a server to start a session: nothing to read
        };
        // That it moves with each transaction needs a server: `tests/it/reserve.rs` (a
        // gapless token of an aborted transaction refused in the next one).
        assert_eq!(
            txn_number(&session),
            Some(0),
            "the driver's Debug text shows it"
        );
    }
}
