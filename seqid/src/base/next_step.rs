//! What a caller does next after an [`Error`]: the variants by group, one classification
//! read by the predicates callers ask (`is_outcome_unknown`, `is_invalid_input`), and the
//! driver's error behind one.

use crate::base::error::{Error, ErrorKind};

impl Error {
    /// Whether what the call wrote is unknown: the answer was lost after the request was
    /// sent, so it may be stored, and the document (or the batch) keeps its ids. The one
    /// question after a failed write, "should I resume?": `true` for
    /// [`OutcomeUnknown`](ErrorKind::OutcomeUnknown) (finish it with
    /// [`resume_insert`](crate::Document::resume_insert)), a [`Bulk`](ErrorKind::Bulk) with
    /// documents of unknown fate ([`resume_insert_many`](crate::Document::resume_insert_many)),
    /// [`ItemsOutcomeUnknown`](ErrorKind::ItemsOutcomeUnknown) (append again with the same
    /// token), [`ReplaceOutcomeUnknown`](ErrorKind::ReplaceOutcomeUnknown) (replace again) and
    /// [`TransactionOutcomeUnknown`](ErrorKind::TransactionOutcomeUnknown) (a commit without an
    /// answer: read to learn whether it committed). Every other error leaves nothing to
    /// settle: what it names was not written.
    ///
    /// ```no_run
    /// # use seqid::Document;
    /// # #[derive(serde::Serialize, Document)]
    /// # #[seq_id("userid", collection = "users")]
    /// # struct User { #[serde(rename = "_id")] id: i64, name: String }
    /// # async fn run(db: seqid::Database) -> Result<(), seqid::Error> {
    /// let mut ada = User { id: 0, name: "Ada".into() };
    /// let id = match ada.insert(&db).await {
    ///     Err(error) if error.is_outcome_unknown() => ada.resume_insert(&db).await?,
    ///     other => other?,
    /// };
    /// # Ok(()) }
    /// ```
    pub fn is_outcome_unknown(&self) -> bool {
        match self.kind() {
            ErrorKind::Bulk(bulk) => !bulk.unknown.is_empty(),
            _ => self.next() == Next::Settle,
        }
    }

    /// Whether the call was refused for what the caller gave it, before anything was
    /// written: an id already set, an option, a scope, a code or a natural key that is not
    /// one, a reserved id given where it does not belong, a type numbered later given to
    /// `insert`, an item number set, a gapless call outside a transaction. Calling again
    /// with the same input fails the same way; a service answers such a request with a
    /// client error (422), where a failure of the database (a [`driver_error`](Self::driver_error),
    /// an unknown outcome) is its own (503).
    ///
    /// ```no_run
    /// # use seqid::Document;
    /// # #[derive(serde::Serialize, Document)]
    /// # #[seq_id("userid", collection = "users")]
    /// # struct User { #[serde(rename = "_id")] id: i64, name: String }
    /// # async fn run(db: seqid::Database) {
    /// let mut copy = User { id: 7, name: "a copy".into() };
    /// let error = copy.insert(&db).await.unwrap_err();
    /// assert!(error.is_invalid_input(), "{error}"); // IdAlreadySet: the id is set
    /// # }
    /// ```
    pub fn is_invalid_input(&self) -> bool {
        self.next() == Next::Fix
    }

    /// The driver's error behind this one (a network failure, a write concern, a server's
    /// answer), with its labels, if the driver was where it failed: for
    /// [`Driver`](ErrorKind::Driver), [`OutcomeUnknown`](ErrorKind::OutcomeUnknown) and
    /// [`TransactionOutcomeUnknown`](ErrorKind::TransactionOutcomeUnknown).
    ///
    /// ```no_run
    /// # use seqid::Document;
    /// # #[derive(serde::Serialize, Document)]
    /// # #[seq_id("userid", collection = "users")]
    /// # struct User { #[serde(rename = "_id")] id: i64 }
    /// # async fn run(db: seqid::Database) {
    /// if let Err(error) = (User { id: 0 }).insert(&db).await {
    ///     if let Some(driver) = error.driver_error() {
    ///         eprintln!("the database failed: {:?}", driver.kind);
    ///     }
    /// }
    /// # }
    /// ```
    pub fn driver_error(&self) -> Option<&mongodb::error::Error> {
        match self.kind() {
            ErrorKind::Driver { source, .. }
            | ErrorKind::OutcomeUnknown { source, .. }
            | ErrorKind::TransactionOutcomeUnknown { source, .. } => Some(source),
            _ => None,
        }
    }

    /// Whether the driver's error behind this one carries the label `label`
    /// (`"TransientTransactionError"`: run the transaction again;
    /// `"UnknownTransactionCommitResult"`: commit again), as the driver's own
    /// `contains_label`; `false` where the driver did not fail.
    ///
    /// ```no_run
    /// # fn run(error: seqid::Error) {
    /// if error.contains_label("TransientTransactionError") {
    ///     // run the whole transaction again
    /// }
    /// # }
    /// ```
    pub fn contains_label(&self, label: &str) -> bool {
        self.driver_error()
            .is_some_and(|driver| driver.contains_label(label))
    }

    /// What the caller does next, for each variant: one place that says it, read by the
    /// predicates above (and the guide's errors chapter groups the variants the same way).
    fn next(&self) -> Next {
        match self.kind() {
            ErrorKind::IdAlreadySet { .. }
            | ErrorKind::InvalidOption { .. }
            | ErrorKind::InvalidScope { .. }
            | ErrorKind::InvalidCode { .. }
            | ErrorKind::InvalidNaturalKey { .. }
            | ErrorKind::ReservedScope { .. }
            | ErrorKind::ReservedElsewhere { .. }
            | ErrorKind::ReservedTransaction { .. }
            | ErrorKind::TransactionRequired { .. }
            | ErrorKind::NumberedLater { .. }
            | ErrorKind::ItemNumberSet { .. }
            | ErrorKind::ReplaceWithoutId { .. } => Next::Fix,
            ErrorKind::OutcomeUnknown { .. }
            | ErrorKind::TransactionOutcomeUnknown { .. }
            | ErrorKind::ItemsOutcomeUnknown { .. }
            | ErrorKind::ReplaceOutcomeUnknown { .. } => Next::Settle,
            ErrorKind::Driver { .. } => Next::Driver,
            ErrorKind::CounterNotNumeric { .. }
            | ErrorKind::CounterContended { .. }
            | ErrorKind::CounterBelowStored { .. }
            | ErrorKind::CounterMissing { .. }
            | ErrorKind::NoCounter { .. }
            | ErrorKind::Overflow { .. }
            | ErrorKind::ZeroId { .. } => Next::Counter,
            ErrorKind::MissingIndex { .. } | ErrorKind::Sharded { .. } => Next::Deployment,
            ErrorKind::DuplicateKey { .. }
            | ErrorKind::Refused { .. }
            | ErrorKind::RetriesExhausted { .. }
            | ErrorKind::ItemsStale { .. } => Next::Refused,
            ErrorKind::DraftNotFound { .. }
            | ErrorKind::DraftAmbiguous { .. }
            | ErrorKind::ItemsNotFound { .. }
            | ErrorKind::ItemsNotArray { .. }
            | ErrorKind::ItemsAmbiguous { .. }
            | ErrorKind::ItemNumberOverflow { .. }
            | ErrorKind::ReplaceNotFound { .. } => Next::Stored,
            ErrorKind::Bulk(_) => Next::Bulk,
        }
    }
}

/// What a caller does next after an error, by group of variants (see [`Error::next`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Next {
    /// The input was refused before anything was written: fix it.
    Fix,
    /// What was written is unknown: settle it (resume, append or replace again, read).
    Settle,
    /// The driver or the server failed before anything was known to be written.
    Driver,
    /// The counter cannot serve (its value, its type's range, its existence): an operator's.
    Counter,
    /// The deployment lacks what the sequence relies on (an index, a shard key).
    Deployment,
    /// The server refused the write, or other writers won every time: nothing written.
    Refused,
    /// What is stored is not what the call expects (no document, several, no array).
    Stored,
    /// A batch: each document's fate in the [`BulkError`].
    Bulk,
}

#[cfg(test)]
mod tests {
    use mongodb::bson::oid::ObjectId;

    use crate::base::bulk_error::BulkError;
    use crate::base::error::{Error, ErrorKind};
    use crate::schema::sequence::Sequence;
    use crate::schema::sequence::testing::counted;

    const SEQ: Sequence = counted("s", "users");

    /// "Should I resume?" has one answer, whatever was being written; the caller's own
    /// mistakes are told apart from the database's failures; the driver's error (and its
    /// labels) is reached the same way for every variant that holds one.
    #[test]
    fn the_predicates_answer_what_the_caller_asks() {
        use crate::schema::item::testing::LINES;
        let driver = || Box::new(mongodb::error::Error::custom("the connection went away"));
        let unknown = Error::new(
            &SEQ,
            ErrorKind::OutcomeUnknown {
                id: 7,
                reason: "the answer was lost",
                source: driver(),
            },
        );
        let appended = Error::new(
            &SEQ,
            ErrorKind::ItemsOutcomeUnknown {
                items: &LINES,
                token: ObjectId::new(),
                source: driver(),
            },
        );
        let duplicate = Error::new(
            &SEQ,
            ErrorKind::DuplicateKey {
                id: 7,
                index: None,
                message: "E11000".into(),
            },
        );
        let set = Error::new(
            &SEQ,
            ErrorKind::IdAlreadySet {
                value: 7,
                unset: "0",
            },
        );
        let bulk = |unknown: Vec<usize>| {
            Error::new(
                &SEQ,
                ErrorKind::Bulk(Box::new(BulkError {
                    inserted: vec![0],
                    failed: vec![],
                    unknown,
                })),
            )
        };
        let failed = Error::driver(&SEQ, "reserving ids", *driver());
        assert!(unknown.is_outcome_unknown() && appended.is_outcome_unknown());
        assert!(bulk(vec![1]).is_outcome_unknown());
        assert!(!bulk(vec![]).is_outcome_unknown());
        for settled in [&duplicate, &set, &failed] {
            assert!(!settled.is_outcome_unknown(), "{settled}");
        }
        assert!(set.is_invalid_input());
        for not_input in [&duplicate, &unknown, &failed, &bulk(vec![1])] {
            assert!(!not_input.is_invalid_input(), "{not_input}");
        }
        assert!(unknown.driver_error().is_some() && failed.driver_error().is_some());
        assert!(duplicate.driver_error().is_none() && appended.driver_error().is_none());
        assert!(!failed.contains_label("TransientTransactionError"));
    }
}
