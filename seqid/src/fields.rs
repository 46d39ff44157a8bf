//! Reading and writing a model's id field: unset checks, checked conversions, and the keys
//! of the ids documents carry.

use mongodb::bson::oid::ObjectId;

use crate::model::{IdValue, Model};
use crate::scope::{Key, Scope};
use crate::{Error, IdField, Sequence, Strategy};

/// `Ok` if the id field of `doc` is unset, else [`Error::IdAlreadySet`].
pub(crate) fn ensure_unset<T: Model>(doc: &T) -> Result<(), Error> {
    match doc.sequence_id().get() {
        None => Ok(()),
        Some(value) => Err(Error::IdAlreadySet {
            sequence: &T::SEQUENCE,
            value: value.into(),
            unset: T::Id::UNSET,
        }),
    }
}

/// The id field holding `id`, and its integer; an error if the field's type cannot hold
/// it, or reads it as unset (0 in a plain integer field).
fn field<T: Model>(id: i64) -> Result<(T::Id, IdValue<T>), Error> {
    let seq = &T::SEQUENCE;
    let Some(field) = T::Id::from_seq(id) else {
        return Err(Error::Overflow {
            sequence: seq,
            value: id.into(),
            target: T::Id::FIELD_TYPE,
            origin: origin(seq).into(),
        });
    };
    match field.get() {
        Some(value) => Ok((field, value)),
        None => Err(Error::ZeroId {
            sequence: seq,
            target: T::Id::TYPE_NAME,
            origin: origin(seq).into(),
        }),
    }
}

/// Where a sequence's ids come from, for error messages.
fn origin(seq: &Sequence) -> String {
    match seq.strategy {
        Strategy::Optimistic { .. } => format!(
            "one above the largest numeric {} in `{}` and every id in flight",
            seq.field, seq.collection
        ),
        _ if !seq.scope.is_empty() => format!(
            "taken from the counter of its scope, {{ _id: {{ sequence: {:?}, scope: ... }} }} in `{}`",
            seq.name, seq.counters
        ),
        _ => format!(
            "taken from the counter {{ _id: {:?} }} in `{}`",
            seq.name, seq.counters
        ),
    }
}

/// Fills the ids of `docs[positions]`; converts them all first, so an overflow fills none.
pub(crate) fn fill_positions<T: Model>(
    docs: &mut [T],
    positions: &[usize],
    keys: &[Key],
) -> Result<Vec<IdValue<T>>, Error> {
    let fields = keys
        .iter()
        .map(|key| field::<T>(key.id))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(positions
        .iter()
        .zip(fields)
        .map(|(&position, (field, value))| {
            *docs[position].sequence_id_mut() = field;
            value
        })
        .collect())
}

/// Fills the id of `doc` with `id`, and returns its value.
pub(crate) fn fill<T: Model>(doc: &mut T, id: i64) -> Result<IdValue<T>, Error> {
    let (field, value) = field::<T>(id)?;
    *doc.sequence_id_mut() = field;
    Ok(value)
}

/// Sets the id field of `doc` back to unset (`0` or `None`).
pub(crate) fn unset<T: Model>(doc: &mut T) {
    *doc.sequence_id_mut() = T::Id::unset();
}

/// The keys of `docs[positions]`, which all carry an id, and their id values. An id
/// beyond `i64` cannot have come from a sequence: [`Error::Overflow`].
pub(crate) fn carried<T: Model>(
    docs: &[T],
    positions: &[usize],
) -> Result<(Vec<Key>, Vec<IdValue<T>>), Error> {
    let seq = &T::SEQUENCE;
    positions
        .iter()
        .filter_map(|&p| Some((&docs[p], docs[p].sequence_id().get()?)))
        .map(|(doc, value)| {
            let wide: i128 = value.into();
            let id = i64::try_from(wide).map_err(|_| Error::Overflow {
                sequence: seq,
                value: wide,
                target: "i64, the range of a sequence",
                origin: "the id the document carries".into(),
            })?;
            let scope = Scope::of(seq, doc)?;
            Ok((Key { scope, id }, value))
        })
        .collect()
}

/// The `_id` an insert filled ([`Model::object_id_mut`]: an `Option<ObjectId>` beside a
/// field sequence), for one document. When it is dropped, at the insert's end or when its
/// caller goes away, the document gets its `_id` back to `None` if its sequence id is
/// unset (known not stored, or never sent): a document's ids are unset together or kept
/// together, whatever path the insert took. A flag, not [`FilledObjectIds`]'s list: a
/// single insert allocates nothing for it.
pub(crate) struct FilledObjectId<'d, T: Model> {
    doc: &'d mut T,
    filled: bool,
}

impl<'d, T: Model> FilledObjectId<'d, T> {
    /// Fills the `_id` of `doc` with a new `ObjectId` if it is unset (nothing for a model
    /// without one).
    pub(crate) fn fill(doc: &'d mut T) -> Self {
        let filled = fill_object_id(doc);
        FilledObjectId { doc, filled }
    }

    /// The document, to insert it.
    pub(crate) fn doc(&mut self) -> &mut T {
        self.doc
    }

    /// Whether this insert filled the `_id`: then no other writer can store a document
    /// equal to it (an `ObjectId` is unique to the process and moment that made it), so a
    /// document equal to it, found at its id, is its own
    /// ([`Sending::content_is_unique`](crate::fate::Sending::content_is_unique)).
    pub(crate) fn made_content_unique(&self) -> bool {
        self.filled
    }
}

impl<T: Model> Drop for FilledObjectId<'_, T> {
    fn drop(&mut self) {
        if self.filled {
            unfill_object_id(self.doc);
        }
    }
}

/// [`FilledObjectId`] for the documents of an `insert_many`.
pub(crate) struct FilledObjectIds<'d, T: Model> {
    docs: &'d mut [T],
    /// The positions whose `_id` this insert filled.
    filled: Vec<usize>,
}

impl<'d, T: Model> FilledObjectIds<'d, T> {
    /// Fills the unset `_id`s of `docs` with new `ObjectId`s (none for a model without
    /// one, at no cost).
    pub(crate) fn fill(docs: &'d mut [T]) -> Self {
        let filled = (0..docs.len())
            .filter(|&position| fill_object_id(&mut docs[position]))
            .collect();
        FilledObjectIds { docs, filled }
    }

    /// The documents, to insert them.
    pub(crate) fn docs(&mut self) -> &mut [T] {
        self.docs
    }

    /// Whether this insert filled the `_id` of every document (see
    /// [`FilledObjectId::made_content_unique`]).
    pub(crate) fn made_content_unique(&self) -> bool {
        !self.filled.is_empty() && self.filled.len() == self.docs.len()
    }
}

impl<T: Model> Drop for FilledObjectIds<'_, T> {
    fn drop(&mut self) {
        for &position in &self.filled {
            unfill_object_id(&mut self.docs[position]);
        }
    }
}

/// Fills the `_id` of `doc` with a new `ObjectId` if the model has one and it is unset;
/// whether it did.
fn fill_object_id<T: Model>(doc: &mut T) -> bool {
    match doc.object_id_mut() {
        Some(slot @ None) => {
            *slot = Some(ObjectId::new());
            true
        }
        _ => false,
    }
}

/// Sets the `_id` an insert filled back to `None` if the document's sequence id is unset.
fn unfill_object_id<T: Model>(doc: &mut T) {
    if doc.sequence_id().is_unset()
        && let Some(slot) = doc.object_id_mut()
    {
        *slot = None;
    }
}
