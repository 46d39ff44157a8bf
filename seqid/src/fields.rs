//! Reading and writing a document's id field: unset checks, checked conversions.

use crate::{Document, Error, IdField, IdValue, Sequence};

pub(crate) fn ensure_unset<T: Document>(seq: &Sequence, doc: &T) -> Result<(), Error> {
    match doc.sequence_id().get() {
        None => Ok(()),
        Some(value) => Err(Error::IdAlreadySet {
            sequence: seq.name.to_owned(),
            field: seq.field,
            value: value.into(),
            unset: T::Id::UNSET,
        }),
    }
}

/// The id field holding `id`, and its integer; an error if the field's type cannot hold
/// it, or reads it as unset (0 in a plain integer field).
pub(crate) fn field<T: Document>(seq: &Sequence, id: i64) -> Result<(T::Id, IdValue<T>), Error> {
    let Some(field) = T::Id::from_seq(id) else {
        return Err(Error::Overflow {
            sequence: seq.name.to_owned(),
            value: id.into(),
            target: T::Id::FIELD_TYPE,
            origin: origin(seq),
        });
    };
    match field.get() {
        Some(value) => Ok((field, value)),
        None => Err(Error::ZeroId {
            sequence: seq.name.to_owned(),
            target: T::Id::TYPE_NAME,
            origin: origin(seq),
        }),
    }
}

/// Where a sequence's ids come from, for error messages.
pub(crate) fn origin(seq: &Sequence) -> String {
    match seq.strategy {
        crate::Strategy::Optimistic { .. } => format!(
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
pub(crate) fn fill_positions<T: Document>(
    seq: &Sequence,
    docs: &mut [T],
    positions: &[usize],
    ids: &[i64],
) -> Result<Vec<IdValue<T>>, Error> {
    let fields = ids
        .iter()
        .map(|&id| field::<T>(seq, id))
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

pub(crate) fn fill<T: Document>(seq: &Sequence, doc: &mut T, id: i64) -> Result<IdValue<T>, Error> {
    let (field, value) = field::<T>(seq, id)?;
    *doc.sequence_id_mut() = field;
    Ok(value)
}

pub(crate) fn unset<T: Document>(doc: &mut T) {
    *doc.sequence_id_mut() = T::Id::unset();
}
