//! The bookkeeping of `insert_many`: one state per document, from waiting for an id to
//! stored, failed or of unknown fate, turned into [`ErrorKind::Bulk`] when not all were
//! stored. Pure: it records what the writes answered and never sends anything.

use crate::base::bulk_error::{BulkError, FailedInsert};
use crate::base::error::{Error, ErrorKind};
use crate::base::fate::{Fate, Rejection};
use crate::base::server::noted;
use crate::fields::scope::Key;
use crate::schema::sequence::Sequence;

/// Where one document of the batch stands.
enum State<V> {
    /// Needs an id (a first one, or a new one after its id was taken).
    Waiting,
    /// Stored with this id value.
    Stored(V),
    /// Not stored; its id field is unset again.
    Failed(FailedInsert),
    /// Maybe stored; it keeps its id.
    Unknown,
}

/// The states of the documents of one `insert_many`, by position in the caller's slice.
pub(crate) struct Batch<V> {
    states: Vec<State<V>>,
    /// The last id each document was sent with (0: none yet), for the report.
    tried: Vec<i64>,
    /// The error that aborted the caller's transaction: the batch's outcome is the
    /// transaction's, reported as this error with its labels, not document by document.
    aborted: Option<mongodb::error::Error>,
}

/// Documents of a batch sent together: their positions in the caller's slice, the keys
/// of the ids they carry, and those ids' values.
pub(crate) struct Outgoing<V> {
    pub positions: Vec<usize>,
    pub keys: Vec<Key>,
    pub values: Vec<V>,
}

impl<V> Default for Outgoing<V> {
    fn default() -> Self {
        Outgoing {
            positions: Vec::new(),
            keys: Vec::new(),
            values: Vec::new(),
        }
    }
}

impl<V> Outgoing<V> {
    pub(crate) fn push(&mut self, position: usize, key: Key, value: V) {
        self.positions.push(position);
        self.keys.push(key);
        self.values.push(value);
    }
}

/// A document whose id another document holds.
pub(crate) struct Taken {
    pub position: usize,
    pub rejection: Rejection,
}

impl<V: Copy> Batch<V> {
    /// A batch of `len` documents, all waiting.
    pub(crate) fn new(len: usize) -> Self {
        Batch {
            states: (0..len).map(|_| State::Waiting).collect(),
            tried: vec![0; len],
            aborted: None,
        }
    }

    /// The positions that still need an id, in order.
    pub(crate) fn waiting(&self) -> Vec<usize> {
        let waiting = |&position: &usize| matches!(self.states[position], State::Waiting);
        (0..self.states.len()).filter(waiting).collect()
    }

    /// Whether no document has been settled yet.
    fn untouched(&self) -> bool {
        self.states.iter().all(|s| matches!(s, State::Waiting))
    }

    /// Records a document that could not be stored (its id field is unset again).
    pub(crate) fn fail(&mut self, position: usize, rejection: Rejection) {
        self.states[position] = State::Failed(FailedInsert {
            index: position,
            id: self.tried[position],
            code: rejection.code,
            message: rejection.message,
        });
    }

    /// Whether the document at `position` was refused.
    pub(crate) fn failed(&self, position: usize) -> bool {
        matches!(self.states[position], State::Failed(_))
    }

    /// Records the id the document at `position` was sent with.
    pub(crate) fn sent(&mut self, position: usize, id: i64) {
        self.tried[position] = id;
    }

    /// Records a document stored with the id it was sent with (`value`).
    pub(crate) fn stored(&mut self, position: usize, value: V) {
        self.states[position] = State::Stored(value);
    }

    /// Records a document that may be stored; it keeps its id.
    pub(crate) fn unknown(&mut self, position: usize) {
        self.states[position] = State::Unknown;
    }

    /// Records the fates of the documents of `outgoing`, written together (in the
    /// caller's transaction if `in_transaction`). Refused ones are failed (their id
    /// fields are to be unset: see [`failed`](Batch::failed)); documents whose id
    /// another document holds are left waiting and returned, for the strategy to decide.
    pub(crate) fn record(
        &mut self,
        outgoing: &Outgoing<V>,
        fates: Vec<Fate>,
        in_transaction: bool,
    ) -> Vec<Taken> {
        let mut taken = Vec::new();
        let sent = outgoing
            .positions
            .iter()
            .zip(&outgoing.keys)
            .zip(&outgoing.values);
        for (((&position, key), &value), fate) in sent.zip(fates) {
            self.tried[position] = key.id;
            if in_transaction && self.aborted.is_none() {
                self.aborted = match &fate {
                    Fate::Unknown(unknown) => Some(unknown.error.clone()),
                    Fate::Refused(rejection) => rejection.source.clone(),
                    _ => None,
                };
            }
            match fate {
                Fate::Stored => self.states[position] = State::Stored(value),
                Fate::Unknown(_) => self.states[position] = State::Unknown,
                Fate::Refused(rejection) => self.fail(position, *rejection),
                Fate::Taken(rejection) => taken.push(Taken {
                    position,
                    rejection: *rejection,
                }),
            }
        }
        taken
    }

    /// Fails every waiting document with `rejection`.
    pub(crate) fn fail_waiting(&mut self, rejection: &Rejection) {
        for position in self.waiting() {
            self.fail(position, rejection.clone());
        }
    }

    /// Stops on `error` (no id could be had for the waiting documents): the plain error
    /// if nothing was settled yet, else [`ErrorKind::Bulk`] with the waiting documents failed.
    pub(crate) fn abandon(mut self, seq: &'static Sequence, error: Error) -> Result<Vec<V>, Error> {
        if self.untouched() {
            return Err(error);
        }
        self.fail_waiting(&Rejection::held_back(error.to_string()));
        self.conclude(seq)
    }

    /// `Ok` with every id if every document is stored, else what happened to each.
    pub(crate) fn conclude(self, seq: &'static Sequence) -> Result<Vec<V>, Error> {
        if let Some(error) = self.aborted {
            let into = seq.collection;
            let doing = format!("inserting into `{into}` in the caller's transaction");
            return Err(Error::driver(seq, doing, noted(error)));
        }
        if self.states.iter().all(|s| matches!(s, State::Stored(_))) {
            return Ok(self
                .states
                .into_iter()
                .filter_map(|s| match s {
                    State::Stored(value) => Some(value),
                    _ => None,
                })
                .collect());
        }
        let mut bulk = BulkError {
            inserted: Vec::new(),
            failed: Vec::new(),
            unknown: Vec::new(),
        };
        for (position, state) in self.states.into_iter().enumerate() {
            match state {
                State::Stored(_) => bulk.inserted.push(position),
                State::Failed(failed) => bulk.failed.push(failed),
                State::Unknown => bulk.unknown.push(position),
                State::Waiting => unreachable!("every document is settled before concluding"),
            }
        }
        Err(Error::new(seq, ErrorKind::Bulk(Box::new(bulk))))
    }
}

#[cfg(test)]
mod tests {
    //! The bookkeeping alone, without a server: what the writes answered goes in, and
    //! what the caller is told comes out.

    use super::*;
    use crate::base::fate::Unknown;
    use crate::base::server::DUPLICATE_KEY;
    use crate::fields::scope::Scope;
    use crate::schema::sequence::testing::counted;

    const SEQ: Sequence = counted("batch", "things");

    fn outgoing(positions: &[usize], ids: &[i64]) -> Outgoing<i64> {
        let mut outgoing = Outgoing::default();
        for (&position, &id) in positions.iter().zip(ids) {
            let key = Key {
                scope: Scope::NONE,
                id,
            };
            outgoing.push(position, key, id);
        }
        outgoing
    }

    fn duplicate() -> Rejection {
        Rejection::write(
            DUPLICATE_KEY,
            "E11000 duplicate key error index: _id_ dup key",
        )
    }

    fn lost() -> Fate {
        Fate::Unknown(Box::new(Unknown {
            why: crate::base::fate::why::NO_ANSWER,
            error: mongodb::error::Error::custom("connection reset"),
        }))
    }

    #[test]
    fn every_document_stored_concludes_with_every_id_in_order() {
        let mut batch = Batch::new(3);
        assert_eq!(batch.waiting(), [0, 1, 2]);
        let taken = batch.record(
            &outgoing(&[0, 1, 2], &[7, 8, 9]),
            vec![Fate::Stored; 3],
            false,
        );
        assert!(taken.is_empty());
        assert!(batch.waiting().is_empty());
        assert_eq!(batch.conclude(&SEQ).unwrap(), [7, 8, 9]);
    }

    #[test]
    fn each_fate_lands_in_its_list_and_taken_ids_wait_again() {
        let mut batch = Batch::new(4);
        let fates = vec![
            Fate::Stored,
            Fate::refused(Rejection::write(121, "Document failed validation")),
            lost(),
            Fate::taken(duplicate()),
        ];
        let taken = batch.record(&outgoing(&[0, 1, 2, 3], &[11, 12, 13, 14]), fates, false);
        assert_eq!(taken.len(), 1);
        assert_eq!(taken[0].position, 3);
        assert!(taken[0].rejection.is_duplicate_key());
        assert!(batch.failed(1) && !batch.failed(3));
        assert_eq!(
            batch.waiting(),
            [3],
            "a taken id's document waits for a new one"
        );
        // The strategy gives it up (a counter's id is handed out once).
        batch.fail(3, taken.into_iter().next().unwrap().rejection);
        let Err(ErrorKind::Bulk(bulk)) = batch.conclude(&SEQ).map_err(Error::into_kind) else {
            panic!("not every document was stored");
        };
        assert_eq!(bulk.inserted, [0]);
        assert_eq!(bulk.unknown, [2]);
        let failed: Vec<(usize, i64, Option<i32>)> = bulk
            .failed
            .iter()
            .map(|f| (f.index, f.id, f.code))
            .collect();
        assert_eq!(failed, [(1, 12, Some(121)), (3, 14, Some(DUPLICATE_KEY))]);
    }

    #[test]
    fn abandoning_an_untouched_batch_is_the_error_itself() {
        let batch: Batch<i64> = Batch::new(2);
        let error = Error::new(&SEQ, ErrorKind::TransactionRequired { has_session: false });
        let Err(ErrorKind::TransactionRequired { .. }) =
            batch.abandon(&SEQ, error).map_err(Error::into_kind)
        else {
            panic!("nothing was settled: the plain error");
        };
    }

    #[test]
    fn abandoning_a_started_batch_fails_the_waiting_documents_with_the_reason() {
        let mut batch = Batch::new(3);
        batch.record(&outgoing(&[0], &[5]), vec![Fate::Stored], false);
        let error = Error::new(&SEQ, ErrorKind::TransactionRequired { has_session: false });
        let message = error.to_string();
        let Err(ErrorKind::Bulk(bulk)) = batch.abandon(&SEQ, error).map_err(Error::into_kind)
        else {
            panic!("one document was stored: a bulk error");
        };
        assert_eq!(bulk.inserted, [0]);
        let failed: Vec<(usize, i64, &str)> = bulk
            .failed
            .iter()
            .map(|f| (f.index, f.id, f.message.as_str()))
            .collect();
        assert_eq!(failed, [(1, 0, message.as_str()), (2, 0, message.as_str())]);
    }

    #[test]
    fn a_failure_in_the_callers_transaction_is_the_transactions_error() {
        let mut batch = Batch::new(2);
        let aborted = Fate::refused(Rejection::not_sent(&mongodb::error::Error::custom(
            "WriteConflict",
        )));
        batch.record(
            &outgoing(&[0, 1], &[1, 2]),
            vec![Fate::Stored, aborted],
            true,
        );
        let Err(ErrorKind::Driver { action, .. }) = batch.conclude(&SEQ).map_err(Error::into_kind)
        else {
            panic!("the transaction's fate decides the batch's");
        };
        assert_eq!(
            &*action,
            "inserting into `things` in the caller's transaction"
        );
    }
}
