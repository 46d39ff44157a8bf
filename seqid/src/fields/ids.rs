//! Reading and writing a model's id field: unset checks, checked conversions, and the keys
//! of the ids documents carry.

use crate::base::error::{Error, ErrorKind};
use crate::fields::code;
use crate::fields::items;
use crate::fields::scope::{Key, Scope};
use crate::schema::id::IdField;
use crate::schema::model::{IdValue, Model};
use crate::schema::sequence::{Sequence, Strategy};

/// `Ok` if every field the insert fills is unset in `doc`: the primary sequence's id, every
/// other sequence's ([`Model::OTHERS`]) and every display code (which `insert` writes
/// with them), and every item's number ([`Model::ITEMS`]). Else [`ErrorKind::IdAlreadySet`],
/// [`ErrorKind::InvalidCode`] or [`ErrorKind::ItemNumberSet`] naming the first one set: a document
/// carrying any of them is never stored under new ids.
pub(crate) fn ensure_unset<T: Model>(doc: &T) -> Result<(), Error> {
    if let Some(value) = doc.sequence_id().get() {
        return Err(Error::new(
            &T::SEQUENCE,
            ErrorKind::IdAlreadySet {
                value: value.into(),
                unset: T::Id::UNSET,
            },
        ));
    }
    ensure_companions_unset(doc)?;
    items::ensure_unset(doc)
}

/// [`ensure_unset`] without the primary's id: the other sequences' ids and the codes of a
/// document whose primary id is unset, when it is sent again (`resume_insert`).
pub(crate) fn ensure_companions_unset<T: Model>(doc: &T) -> Result<(), Error> {
    ensure_others_unset(doc)?;
    code::ensure_unset(doc)
}

/// `Ok` if `doc` may take the id `reserved`, taken for it before: its id unset or that
/// id already ([`ErrorKind::IdAlreadySet`] for any other: an id the caller typed is refused
/// as [`ensure_unset`] refuses it), every other sequence's id unset, and every display
/// code empty or the one its ids write.
pub(crate) fn ensure_unset_or_reserved<T: Model>(doc: &T, reserved: i64) -> Result<(), Error> {
    match doc.sequence_id().get() {
        None => {}
        Some(value) if value.into() == i128::from(reserved) => {}
        Some(_) => return ensure_unset(doc),
    }
    ensure_others_unset(doc)?;
    code::ensure_unset_or_written(doc)
}

/// `Ok` if the draft `doc` may be numbered now (`number_draft`): every other sequence's
/// id unset, no display code stored in it (a draft's codes are written with its number,
/// never replaced), and no value its codes show that would make a code ambiguous.
pub(crate) fn ensure_draft_unset<T: Model>(doc: &T) -> Result<(), Error> {
    ensure_others_unset(doc)?;
    code::ensure_unset_in_draft(doc)?;
    code::check(doc)
}

/// `Ok` if every other sequence's id of `doc` ([`Model::OTHERS`]) is unset
/// ([`ErrorKind::IdAlreadySet`] naming the first that is not).
pub(crate) fn ensure_others_unset<T: Model>(doc: &T) -> Result<(), Error> {
    for (index, seq) in T::OTHERS.iter().enumerate() {
        let Some(field) = doc.other_id(index) else {
            continue;
        };
        if let Some(value) = field.value() {
            return Err(Error::new(
                seq,
                ErrorKind::IdAlreadySet {
                    value,
                    unset: field.unset_value(),
                },
            ));
        }
    }
    Ok(())
}

/// `Ok` unless `T`'s sequence is numbered later, whose documents `operation` (an insert)
/// does not number: [`ErrorKind::NumberedLater`].
pub(crate) fn numbered_on_insert<T: Model>(operation: &'static str) -> Result<(), Error> {
    match T::NUMBERED_LATER {
        false => Ok(()),
        true => Err(Error::new(
            &T::SEQUENCE,
            ErrorKind::NumberedLater { operation },
        )),
    }
}

/// The id field holding `id`, and its integer; an error if the field's type cannot hold
/// it, or reads it as unset (0 in a plain integer field).
fn field<T: Model>(id: i64) -> Result<(T::Id, IdValue<T>), Error> {
    let seq = &T::SEQUENCE;
    let Some(field) = T::Id::from_seq(id) else {
        return Err(Error::new(
            seq,
            ErrorKind::Overflow {
                value: id.into(),
                target: T::Id::FIELD_TYPE,
                origin: origin(seq).into(),
            },
        ));
    };
    match field.get() {
        Some(value) => Ok((field, value)),
        None => Err(Error::new(
            seq,
            ErrorKind::ZeroId {
                target: T::Id::TYPE_NAME,
                origin: origin(seq).into(),
            },
        )),
    }
}

/// Where a sequence's ids come from, for error messages.
pub(crate) fn origin(seq: &Sequence) -> String {
    match seq.strategy {
        Strategy::Optimistic { .. } => format!(
            "one above the largest numeric {} in `{}` and every id in flight",
            seq.field, seq.collection
        ),
        _ if !seq.layout.by_id() => format!(
            "taken from the counter {{ {}: {:?}, ... }} in `{}` ({}'s layout)",
            seq.layout.name_key, seq.name, seq.counters, seq.layout.tool
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

/// Fills the ids of `docs[positions]`, and their display codes (the primary's id is the
/// last one filled, in every path); converts them all first, so an overflow fills none.
pub(crate) fn fill_positions<T: Model>(
    docs: &mut [T],
    positions: &[usize],
    keys: &[Key],
) -> Result<Vec<IdValue<T>>, Error> {
    let fields = keys
        .iter()
        .map(|key| field::<T>(key.id))
        .collect::<Result<Vec<_>, _>>()?;
    let mut values = Vec::with_capacity(fields.len());
    for (&position, (field, value)) in positions.iter().zip(fields) {
        *docs[position].sequence_id_mut() = field;
        values.push(value);
    }
    let coded = positions.iter().try_for_each(|&p| code::fill(&mut docs[p]));
    if let Err(error) = coded {
        for &position in positions {
            unset(&mut docs[position]);
        }
        return Err(error);
    }
    Ok(values)
}

/// Fills the id of `doc` with `id`, and its display codes; returns the id's value.
pub(crate) fn fill<T: Model>(doc: &mut T, id: i64) -> Result<IdValue<T>, Error> {
    let (field, value) = field::<T>(id)?;
    *doc.sequence_id_mut() = field;
    if let Err(error) = code::fill(doc) {
        unset(doc);
        return Err(error);
    }
    Ok(value)
}

/// Sets the id field of `doc` back to unset (`0` or `None`).
pub(crate) fn unset<T: Model>(doc: &mut T) {
    *doc.sequence_id_mut() = T::Id::unset();
}

/// The keys of `docs[positions]`, which all carry an id, and their id values. An id
/// beyond `i64` cannot have come from a sequence: [`ErrorKind::Overflow`].
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
            let id = i64::try_from(wide).map_err(|_| {
                Error::new(
                    seq,
                    ErrorKind::Overflow {
                        value: wide,
                        target: "i64, the range of a sequence",
                        origin: "the id the document carries".into(),
                    },
                )
            })?;
            let scope = Scope::of(seq, doc)?;
            Ok((Key { scope, id }, value))
        })
        .collect()
}
