//! The bookkeeping of `insert_many`: one state per document, from waiting for an id to
//! stored, failed or of unknown fate, turned into [`Error::Bulk`] when not all were stored.

use mongodb::Collection;

use crate::error::{BulkError, FailedInsert};
use crate::fields::{fill_positions, unset};
use crate::scope::Scope;
use crate::session::Session;
use crate::write::{self, Fate, Key, Rejection, Sending};
use crate::{Document, Error, IdField, IdValue, Sequence};

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
    /// How the documents are sent: afresh, or again by a resume, and what settles them.
    sending: Sending,
}

/// A document whose `_id` another document holds.
pub(crate) struct Taken {
    pub position: usize,
    pub rejection: Rejection,
}

impl<V: Copy> Batch<V> {
    /// A batch of `len` documents, all waiting; they are sent as `sending` says (every
    /// send of a waiting document is a first one).
    pub(crate) fn new(len: usize, sending: Sending) -> Self {
        Batch {
            states: (0..len).map(|_| State::Waiting).collect(),
            tried: vec![0; len],
            aborted: None,
            sending,
        }
    }

    /// The positions that still need an id, in order.
    pub(crate) fn waiting(&self) -> Vec<usize> {
        self.states
            .iter()
            .enumerate()
            .filter(|(_, state)| matches!(state, State::Waiting))
            .map(|(position, _)| position)
            .collect()
    }

    /// Whether no document has been settled yet.
    fn untouched(&self) -> bool {
        self.states
            .iter()
            .all(|state| matches!(state, State::Waiting))
    }

    /// Records a document that could not be stored (its id field is already unset).
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

    /// Records a document that may be stored; it keeps its id.
    pub(crate) fn unknown(&mut self, position: usize) {
        self.states[position] = State::Unknown;
    }

    /// Fills the ids of `docs[positions]` with those of `keys` (all or none, see
    /// [`fill_positions`]) and writes them for the first time, as [`write`](Batch::write).
    pub(crate) async fn fill_and_write<T: Document<Id: IdField<Value = V>>>(
        &mut self,
        seq: &Sequence,
        collection: &Collection<T>,
        docs: &mut [T],
        positions: &[usize],
        keys: &[Key],
        session: &mut Session<'_>,
    ) -> Result<Vec<Taken>, Error> {
        let ids: Vec<i64> = keys.iter().map(|key| key.id).collect();
        let values = fill_positions(seq, docs, positions, &ids)?;
        let first = Sending::first(self.sending.content_is_unique);
        Ok(self
            .write(
                collection, seq, docs, positions, keys, &values, first, session,
            )
            .await)
    }

    /// Writes `docs[positions]`, which carry the ids of `keys` (and `values`), with one
    /// `insert_many`, and records their fates. Documents whose id another document holds
    /// are left waiting, their ids untouched, and returned, for the caller to decide.
    // The documents, their positions, keys and values are the caller's parallel slices.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn write<T: Document<Id: IdField<Value = V>>>(
        &mut self,
        collection: &Collection<T>,
        seq: &Sequence,
        docs: &mut [T],
        positions: &[usize],
        keys: &[Key],
        values: &[V],
        sending: Sending,
        session: &mut Session<'_>,
    ) -> Vec<Taken> {
        let sent: Vec<&T> = positions.iter().map(|&p| &docs[p]).collect();
        let fates = write::insert_many(collection, seq, &sent, keys, sending, session).await;
        let mut taken = Vec::new();
        for (((&position, key), &value), fate) in positions.iter().zip(keys).zip(values).zip(fates)
        {
            self.tried[position] = key.id;
            if session.in_transaction() && self.aborted.is_none() {
                self.aborted = match &fate {
                    Fate::Unknown(unknown) => Some(unknown.error.clone()),
                    Fate::Refused(rejection) => rejection.source.clone(),
                    _ => None,
                };
            }
            match fate {
                Fate::Stored => self.states[position] = State::Stored(value),
                Fate::Unknown(_) => self.states[position] = State::Unknown,
                Fate::Refused(rejection) => {
                    unset(&mut docs[position]);
                    self.fail(position, rejection);
                }
                Fate::Taken(rejection) => {
                    taken.push(Taken {
                        position,
                        rejection,
                    });
                }
            }
        }
        taken
    }

    /// Stops on `error` (no id could be had for the waiting documents): the plain error
    /// if nothing was settled yet, else [`Error::Bulk`] with the waiting documents failed.
    pub(crate) fn abandon(mut self, seq: &Sequence, error: Error) -> Result<Vec<V>, Error> {
        if self.untouched() {
            return Err(error);
        }
        let message = error.to_string();
        for position in self.waiting() {
            self.fail(
                position,
                Rejection {
                    message: message.clone(),
                    ..Rejection::default()
                },
            );
        }
        self.conclude(seq)
    }

    /// `Ok` with every id if every document is stored, else what happened to each.
    pub(crate) fn conclude(self, seq: &Sequence) -> Result<Vec<V>, Error> {
        if let Some(error) = self.aborted {
            return Err(Error::driver(
                seq.name,
                format!(
                    "inserting into `{}` in the caller's transaction",
                    seq.collection
                ),
                error,
            ));
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
            sequence: seq.name.to_owned(),
            collection: seq.collection.to_owned(),
            field: seq.field,
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
        Err(Error::Bulk(Box::new(bulk)))
    }
}

/// The keys of `docs[positions]`, which all carry an id, and their id values. An id
/// beyond `i64` cannot have come from a sequence: [`Error::Overflow`].
pub(crate) fn carried<T: Document>(
    seq: &Sequence,
    docs: &[T],
    positions: &[usize],
) -> Result<(Vec<Key>, Vec<IdValue<T>>), Error> {
    positions
        .iter()
        .filter_map(|&p| Some((&docs[p], docs[p].sequence_id().get()?)))
        .map(|(doc, value)| {
            let wide: i128 = value.into();
            let id = i64::try_from(wide).map_err(|_| Error::Overflow {
                sequence: seq.name.to_owned(),
                value: wide,
                target: "i64, the range of a sequence",
                origin: "the id the document carries".into(),
            })?;
            let scope = Scope::of(seq, doc)?;
            Ok((Key { scope, id }, value))
        })
        .collect()
}
