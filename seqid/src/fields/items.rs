//! A document's arrays of numbered items at insert ([`Model::ITEMS`]): checked unset with
//! its ids, numbered in memory before the write (no round trip: a new document's array
//! starts at the item type's `start`), and unset with its ids when the document is known
//! not to be stored ([`crate::fields::companions`]), so that a retried insert numbers them
//! again.

use crate::base::error::{Error, ErrorKind};
use crate::schema::id::AnyIdField;
use crate::schema::item::{self, ItemsField, Unnumberable};
use crate::schema::model::Model;
use crate::schema::sequence::Sequence;

/// [`Unnumberable`] as seqid's error, for the array `items` of the type whose sequence is
/// `sequence`.
pub(crate) fn unnumberable(
    sequence: &'static Sequence,
    items: &'static ItemsField,
    why: Unnumberable,
) -> Error {
    match why {
        Unnumberable::Set { position, value } => Error::new(
            sequence,
            ErrorKind::ItemNumberSet {
                items,
                position,
                value,
            },
        ),
        Unnumberable::Overflow { position, value } => Error::new(
            sequence,
            ErrorKind::ItemNumberOverflow {
                items,
                position,
                value,
            },
        ),
    }
}

/// [`unnumberable`], for the array `items` of `T`.
fn error<T: Model>(items: &'static ItemsField, why: Unnumberable) -> Error {
    unnumberable(&T::SEQUENCE, items, why)
}

/// `Ok` if no item of `doc` carries a number, and every array's numbers would fit their
/// fields (checked on a dry run: numbering at insert then cannot fail).
pub(crate) fn ensure_unset<T: Model>(doc: &T) -> Result<(), Error> {
    for (index, spec) in T::ITEMS.iter().enumerate() {
        let Some((items, last)) = doc.items(index) else {
            continue;
        };
        item::ensure_unset(items).map_err(|why| error::<T>(spec, why))?;
        let numbers = item::numbers_after(&spec.number, spec.number.none_yet(), items.count())
            .map_err(|why| error::<T>(spec, why))?;
        // The widest number is the last; the mark holds it too (or "none yet").
        let mark = numbers.last().copied().unwrap_or(spec.number.none_yet());
        let widest = numbers.last().copied();
        let overflow = match widest {
            Some(widest) if !fits(items.number_type(), widest) => Some(widest),
            _ if !mark_fits(spec, last, mark) => Some(mark),
            _ => None,
        };
        if let Some(value) = overflow {
            let position = numbers.len().saturating_sub(1);
            let value = value.into();
            return Err(error::<T>(spec, Unnumberable::Overflow { position, value }));
        }
    }
    Ok(())
}

/// Whether the mark field `last` can hold `mark`: as a number, or, "none yet" below 0,
/// as `None` ([`item::write_mark`]).
fn mark_fits(spec: &ItemsField, last: &dyn AnyIdField, mark: i64) -> bool {
    let none = mark == spec.number.none_yet() && item::mark_can_be_none(last);
    fits(last.type_name(), mark) || none
}

/// Whether `value` fits the integer type named `type_name` (an `IdField`'s `TYPE_NAME`).
fn fits(type_name: &str, value: i64) -> bool {
    match type_name {
        "i32" => i32::try_from(value).is_ok(),
        "u32" => u32::try_from(value).is_ok(),
        "u64" => u64::try_from(value).is_ok(),
        _ => true,
    }
}

/// Numbers the items of every array of `doc` from its start and sets each mark, unless
/// an array carries numbers already (a document sent again by `resume_insert` keeps the
/// numbers of its first send). Checked by [`ensure_unset`] before.
pub(crate) fn number_at_insert<T: Model>(doc: &mut T) {
    for (index, spec) in T::ITEMS.iter().enumerate() {
        let Some((items, last)) = doc.items_mut(index) else {
            continue;
        };
        if item::ensure_unset(items).is_err() {
            continue;
        }
        // Checked to fit by `ensure_unset`, so that this cannot fail.
        let _ = item::number(&spec.number, items, last, spec.number.none_yet());
    }
}

/// Sets the items of every array of `doc` back to unset, and each mark to "none yet".
pub(crate) fn unset<T: Model>(doc: &mut T) {
    for (index, spec) in T::ITEMS.iter().enumerate() {
        if let Some((items, last)) = doc.items_mut(index) {
            item::unset(&spec.number, items, last);
        }
    }
}
