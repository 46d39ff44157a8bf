//! The bookkeeping of `insert_many`: one state per document, from waiting for an id to
//! stored, failed or of unknown fate, turned into [`Error::Bulk`] when not all were stored.

use crate::context::Context;
use crate::error::{BulkError, FailedInsert};
use crate::fields::{fill_positions, unset};
use crate::scope::Scope;
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

/// A document whose `_id` another document holds.
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

    /// Fills the ids of `docs[positions]` with those of `keys` (all or none, see
    /// [`fill_positions`]) and writes them for the first time, as [`write`](Batch::write).
    pub(crate) async fn fill_and_write<T: Document<Id: IdField<Value = V>>>(
        &mut self,
        docs: &mut [T],
        positions: Vec<usize>,
        keys: Vec<Key>,
        hold: impl Send + 'static,
        cx: &mut Context<'_>,
    ) -> Result<Vec<Taken>, Error> {
        let ids: Vec<i64> = keys.iter().map(|key| key.id).collect();
        let values = fill_positions(cx.seq, docs, &positions, &ids)?;
        let outgoing = Outgoing {
            positions,
            keys,
            values,
        };
        let first = cx.first();
        Ok(self.write(docs, &outgoing, first, hold, cx).await)
    }

    /// Writes the documents of `outgoing` with one `insert_many`, sent as `send` says, and
    /// records their fates. Documents whose id another document holds are left waiting,
    /// their ids untouched, and returned, for the caller to decide. `hold` is dropped when
    /// the writes end (see [`write::insert_many`]).
    pub(crate) async fn write<T: Document<Id: IdField<Value = V>>>(
        &mut self,
        docs: &mut [T],
        outgoing: &Outgoing<V>,
        send: Sending,
        hold: impl Send + 'static,
        cx: &mut Context<'_>,
    ) -> Vec<Taken> {
        let sent: Vec<&T> = outgoing.positions.iter().map(|&p| &docs[p]).collect();
        let fates = write::insert_many(&sent, &outgoing.keys, send, hold, cx).await;
        let mut taken = Vec::new();
        let sent = outgoing
            .positions
            .iter()
            .zip(&outgoing.keys)
            .zip(&outgoing.values);
        for (((&position, key), &value), fate) in sent.zip(fates) {
            self.tried[position] = key.id;
            if cx.session.in_transaction() && self.aborted.is_none() {
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
                    self.fail(position, *rejection);
                }
                Fate::Taken(rejection) => {
                    taken.push(Taken {
                        position,
                        rejection: *rejection,
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
