//! A commit or an abort of the caller's transaction that ends the transaction on the server
//! even if its future is dropped before it has answered.
//!
//! Why: the driver (3.9) marks a transaction committed, or aborted, *before* it sends the
//! command (`CommitTransaction::execute` in its `client/session/action.rs`). If the future
//! is dropped before the command has left (waiting for a connection: under load, or right
//! after a failover, when the pool connects anew), the server never hears of it, and
//! nothing else ends the transaction: dropping the session aborts only a transaction the
//! driver believes in progress. The transaction then holds what it wrote until its lifetime
//! runs out (60 s by default); for a gapless counter, that is every writer of the sequence,
//! in every process. A storm test (`tests/it/gapless_storm.rs`) of calls cut during their
//! commit stalled so for two minutes once in CI.
//!
//! How: while the command is under way, an [`Ending`] guard holds the session's id and its
//! client. Dropped before the command answered, it sends `killSessions` for that session in a
//! task of its own, which aborts the transaction if the commit has not reached the server
//! and leaves one already committed as it is (a commit the server has begun ends as it
//! would have). The caller, who cut the call, never knew the outcome either way.
//!
//! The cost, in the moments the kill is on its way: it ends whatever runs in that server
//! session when it arrives. A new transaction begun in the same session is aborted too (its
//! caller's retry runs it again), and the driver, which pools server sessions, may have
//! handed the same one to another operation of the client, which is then interrupted (an
//! error the server answered: nothing written). Against that, the alternative is every
//! writer of the counter, in every process, stalled for the transaction's lifetime. The
//! driver exposes no transaction number, which an `abortTransaction` of that transaction
//! alone would need.

use mongodb::bson::{Document as BsonDocument, doc};
use mongodb::{Client, ClientSession};

/// A commit or abort of the transaction of a session, under way (see the module docs).
pub(crate) struct Ending {
    /// The client and the session's id, until the command has answered.
    unanswered: Option<(Client, BsonDocument)>,
}

impl Ending {
    /// Watches the commit or abort about to be sent in `session`.
    pub(crate) fn watch(session: &ClientSession) -> Ending {
        Ending {
            unanswered: Some((session.client(), session.id().clone())),
        }
    }

    /// The command has answered (whatever it said): nothing is left to end.
    pub(crate) fn answered(mut self) {
        self.unanswered = None;
    }
}

impl Drop for Ending {
    fn drop(&mut self) {
        let Some((client, session)) = self.unanswered.take() else {
            return;
        };
        // No runtime (it is shutting down): the server's transaction lifetime ends it.
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        runtime.spawn(async move {
            tracing::debug!(
                "seqid: a transaction's commit or abort was cut before its answer; ending the \
                 transaction on the server"
            );
            let kill = doc! { "killSessions": [session] };
            if let Err(error) = client.database("admin").run_command(kill).await {
                tracing::debug!(%error, "seqid: ending a cut transaction failed");
            }
        });
    }
}
