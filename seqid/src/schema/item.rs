//! Items numbered inside their document: what an item is (the trait `#[derive(Item)]`
//! implements), what an array of them declares on its document (`#[seq_items(last =
//! "...")]`), and the numbering in memory that every path shares: at insert, and before an
//! append is sent. No I/O here.
//!
//! An item's number is unique within its document's array, never across documents. The
//! document keeps its own high-water mark, the `last` field: the last number handed out in
//! that array, or `start - step` (0 for the default start 1, step 1) while it never had an
//! item. Numbers are never handed out twice in a document, also after their items are
//! removed, since the mark does not go back.

use serde::Serialize;

use crate::schema::id::{AnyIdField, IdField};

/// How an item type's number is given: the key it is serialized under, its first number
/// and how far apart the numbers are. Written by `#[derive(Item)]` from `#[seq_no]`.
///
/// ```
/// use seqid::Item;
/// use seqid::__private::ItemNumber;
///
/// #[derive(serde::Serialize, serde::Deserialize, Item)]
/// struct Line {
///     #[seq_no(start = 10, step = 10)]
///     no: u32,
///     sku: String,
/// }
///
/// assert_eq!(Line::NUMBER, ItemNumber { key: "no", start: 10, step: 10 });
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ItemNumber {
    /// The key the number is serialized under.
    pub key: &'static str,
    /// The first number of every document's array.
    pub start: i64,
    /// How far apart the numbers are, at least 1.
    pub step: i64,
}

impl ItemNumber {
    /// The mark of an array that never had an item: `start - step`, so that the first
    /// number handed out is `start`.
    ///
    /// ```
    /// let number = seqid::__private::ItemNumber { key: "no", start: 1, step: 1 };
    /// assert_eq!(number.none_yet(), 0);
    /// ```
    pub const fn none_yet(&self) -> i64 {
        self.start.saturating_sub(self.step)
    }

    /// The `k`-th number (from 0) after the mark `base`; `None` past `i64`.
    pub(crate) fn after(&self, base: i64, k: usize) -> Option<i64> {
        let k = i64::try_from(k).ok()?.checked_add(1)?;
        base.checked_add(k.checked_mul(self.step)?)
    }
}

/// A type whose values are items of a document's array, each with a number unique within
/// its document: what `#[derive(Item)]` implements from `#[seq_no]` on one integer field
/// (`i32`, `i64`, `u32`, `u64` or an `Option` of one; 0 or `None` means "not numbered yet").
///
/// ```
/// use seqid::Item;
///
/// #[derive(serde::Serialize, serde::Deserialize, Item)]
/// struct Line {
///     #[seq_no]
///     no: i64,
///     sku: String,
/// }
///
/// let line = Line { no: 3, sku: "A-1".into() };
/// assert_eq!(*line.item_no(), 3);
/// assert_eq!(Line::NUMBER.start, 1);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a `seqid::Item`",
    label = "the items of a `#[seq_items]` array must be `seqid::Item`",
    note = "derive it on the item type, `#[derive(Serialize, Deserialize, seqid::Item)]`, with `#[seq_no]` on its integer number field"
)]
pub trait Item: Serialize + Send + Sync + Sized {
    /// The number's key, start and step.
    const NUMBER: ItemNumber;

    /// The type of the number field.
    type No: IdField;

    /// The number field.
    fn item_no(&self) -> &Self::No;

    /// The number field, to fill it.
    fn item_no_mut(&mut self) -> &mut Self::No;
}

/// An array of items as the runtime reads it, whatever the item type: what a document's
/// `#[seq_items]` field is, through [`Model::items`](crate::Model::items).
pub trait AnyItems: Send + Sync {
    /// How many items the array holds.
    fn count(&self) -> usize;

    /// The number of the item at `at`, if it is set.
    fn number(&self, at: usize) -> Option<i128>;

    /// Sets the number of the item at `at`; `false` if the number field's type cannot hold
    /// `number`, or reads it as unset.
    fn set_number(&mut self, at: usize, number: i64) -> bool;

    /// Sets the number of the item at `at` back to unset.
    fn unset_number(&mut self, at: usize);

    /// The number field's type, for messages.
    fn number_type(&self) -> &'static str;
}

impl<I: Item> AnyItems for Vec<I> {
    fn count(&self) -> usize {
        self.len()
    }

    fn number(&self, at: usize) -> Option<i128> {
        self.get(at)?.item_no().get().map(Into::into)
    }

    fn set_number(&mut self, at: usize, number: i64) -> bool {
        let Some(item) = self.get_mut(at) else {
            return false;
        };
        match I::No::from_seq(number).filter(|no| !no.is_unset()) {
            Some(no) => {
                *item.item_no_mut() = no;
                true
            }
            None => false,
        }
    }

    fn unset_number(&mut self, at: usize) {
        if let Some(item) = self.get_mut(at) {
            *item.item_no_mut() = <I::No as IdField>::unset();
        }
    }

    fn number_type(&self) -> &'static str {
        <I::No as IdField>::TYPE_NAME
    }
}

/// A document's array of items, as `#[seq_items(last = "...")]` declares it: the array's
/// key, its mark's key, and how its items are numbered.
///
/// ```
/// use seqid::{Document, Item, Model};
/// # use serde::{Deserialize, Serialize};
///
/// #[derive(Serialize, Deserialize, Item)]
/// struct Line { #[seq_no] no: i64, sku: String }
///
/// #[derive(Serialize, Deserialize, Document)]
/// #[seq_id("order", collection = "orders")]
/// struct Order {
///     #[serde(rename = "_id")]
///     id: i64,
///     #[seq_items(last = "lines_last")]
///     lines: Vec<Line>,
///     lines_last: i64,
/// }
///
/// assert_eq!(Order::ITEMS[0].field, "lines");
/// assert_eq!(Order::ITEMS[0].last, "lines_last");
/// assert_eq!(Order::ITEMS[0].number.key, "no");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ItemsField {
    /// The array's key, as serialized.
    pub field: &'static str,
    /// The mark's key, as serialized: the last number handed out in the array.
    pub last: &'static str,
    /// How the items are numbered (the item type's [`Item::NUMBER`]).
    pub number: ItemNumber,
}

impl ItemsField {
    /// The hidden field that keeps the array's last appends, each with its token and the
    /// mark it set, so that an append whose answer was lost is told from one that never
    /// landed: `_seqid_<field>_appends`.
    ///
    /// ```
    /// let lines = seqid::__private::ItemsField {
    ///     field: "lines",
    ///     last: "lines_last",
    ///     number: seqid::__private::ItemNumber { key: "no", start: 1, step: 1 },
    /// };
    /// assert_eq!(lines.appends(), "_seqid_lines_appends");
    /// ```
    pub fn appends(&self) -> String {
        format!("_seqid_{}_appends", self.field)
    }
}

/// How many appends the hidden list keeps per array: an append is recognised by its token
/// as long as fewer than this many appends to the same array came after it.
pub const APPENDS_KEPT: i32 = 64;

/// Why items cannot be numbered, before anything is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Unnumberable {
    /// The item at this position carries a number already.
    Set { position: usize, value: i128 },
    /// The number at this position does not fit the number field's type, or the mark's,
    /// or `i64`.
    Overflow { position: usize, value: i128 },
}

/// `Ok` if no item carries a number.
pub(crate) fn ensure_unset(items: &dyn AnyItems) -> Result<(), Unnumberable> {
    (0..items.count()).try_for_each(|position| match items.number(position) {
        Some(value) => Err(Unnumberable::Set { position, value }),
        None => Ok(()),
    })
}

/// The numbers the items of `items` get after the mark `base`, in order: `base + step`,
/// `base + 2 * step`, ... Checked against `i64` only.
pub(crate) fn numbers_after(
    number: &ItemNumber,
    base: i64,
    count: usize,
) -> Result<Vec<i64>, Unnumberable> {
    (0..count)
        .map(|k| {
            number.after(base, k).ok_or(Unnumberable::Overflow {
                position: k,
                value: i128::from(base) + (k as i128 + 1) * i128::from(number.step),
            })
        })
        .collect()
}

/// Numbers every item of `items` after the mark `base` and sets the mark `last` to the
/// last number (to `base` for no item); converted all first, so that nothing is set if any
/// number does not fit. Returns the numbers.
pub(crate) fn number(
    number: &ItemNumber,
    items: &mut dyn AnyItems,
    last: &mut dyn AnyIdField,
    base: i64,
) -> Result<Vec<i64>, Unnumberable> {
    let numbers = numbers_after(number, base, items.count())?;
    let mark = numbers.last().copied().unwrap_or(base);
    if !write_mark(number, last, mark) {
        return Err(Unnumberable::Overflow {
            position: numbers.len().saturating_sub(1),
            value: mark.into(),
        });
    }
    for (position, &no) in numbers.iter().enumerate() {
        if !items.set_number(position, no) {
            for earlier in 0..position {
                items.unset_number(earlier);
            }
            return Err(Unnumberable::Overflow {
                position,
                value: no.into(),
            });
        }
    }
    Ok(numbers)
}

/// Sets every number of `items` back to unset, and the mark to `none_yet`.
pub(crate) fn unset(number: &ItemNumber, items: &mut dyn AnyItems, last: &mut dyn AnyIdField) {
    for position in 0..items.count() {
        items.unset_number(position);
    }
    write_mark(number, last, number.none_yet());
}

/// Writes `mark` into the mark field `last`; "none yet" (`start - step`) that the field's
/// type cannot hold (a `start` below `step` in an unsigned field) is written `None` in an
/// `Option` field, which every append reads as "none yet". Whether it could.
pub(crate) fn write_mark(number: &ItemNumber, last: &mut dyn AnyIdField, mark: i64) -> bool {
    if last.fill(mark) {
        return true;
    }
    let none = mark == number.none_yet() && mark_can_be_none(last);
    if none {
        last.unset();
    }
    none
}

/// Whether the mark field `last` is an `Option`, whose `None` says "none yet".
pub(crate) fn mark_can_be_none(last: &dyn AnyIdField) -> bool {
    last.unset_value() == "None"
}

/// Items fields for the unit tests.
#[cfg(test)]
pub(crate) mod testing {
    use super::{ItemNumber, ItemsField};

    /// `lines`, numbered by `no` from 1, its mark `lines_last`.
    pub(crate) const LINES: ItemsField = ItemsField {
        field: "lines",
        last: "lines_last",
        number: ItemNumber {
            key: "no",
            start: 1,
            step: 1,
        },
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Line {
        no: Option<u32>,
    }

    impl Item for Line {
        const NUMBER: ItemNumber = ItemNumber {
            key: "no",
            start: 10,
            step: 5,
        };
        type No = Option<u32>;
        fn item_no(&self) -> &Option<u32> {
            &self.no
        }
        fn item_no_mut(&mut self) -> &mut Option<u32> {
            &mut self.no
        }
    }

    fn lines(n: usize) -> Vec<Line> {
        (0..n).map(|_| Line { no: None }).collect()
    }

    #[test]
    fn numbers_start_step_and_the_mark() {
        let mut items = lines(3);
        let mut last = 0_i64;
        let base = Line::NUMBER.none_yet();
        assert_eq!(base, 5);
        let numbers = number(&Line::NUMBER, &mut items, &mut last, base).unwrap();
        assert_eq!(numbers, [10, 15, 20]);
        assert_eq!(last, 20);
        assert_eq!(items[2].no, Some(20));
        assert_eq!(
            ensure_unset(&items),
            Err(Unnumberable::Set {
                position: 0,
                value: 10
            })
        );
    }

    #[test]
    fn no_item_leaves_the_mark_at_base() {
        let mut items = lines(0);
        let mut last = 99_i64;
        assert_eq!(
            number(&Line::NUMBER, &mut items, &mut last, 5).unwrap(),
            Vec::<i64>::new()
        );
        assert_eq!(last, 5);
    }

    #[test]
    fn an_overflow_sets_nothing() {
        let mut items = lines(2);
        let mut last = 0_i64;
        let base = i64::from(u32::MAX) - 5;
        let refused = number(&Line::NUMBER, &mut items, &mut last, base);
        assert!(matches!(
            refused,
            Err(Unnumberable::Overflow { position: 1, .. })
        ));
        assert!(items.iter().all(|line| line.no.is_none()));
        assert!(numbers_after(&Line::NUMBER, i64::MAX - 1, 1).is_err());
    }

    #[test]
    fn none_yet_below_zero_is_none_in_an_option_mark() {
        let from_zero = ItemNumber {
            key: "no",
            start: 0,
            step: 1,
        };
        let mut last: Option<u32> = Some(7);
        assert!(write_mark(&from_zero, &mut last, -1));
        assert_eq!(last, None);
        let mut plain = 7_u32;
        assert!(
            !write_mark(&from_zero, &mut plain, -1),
            "0 would read as a mark"
        );
        assert_eq!(plain, 7);
        assert!(write_mark(&from_zero, &mut last, 3));
        assert_eq!(last, Some(3));
    }

    #[test]
    fn unset_goes_back_to_none_yet() {
        let mut items = lines(2);
        let mut last = 0_i64;
        number(&Line::NUMBER, &mut items, &mut last, 5).unwrap();
        unset(&Line::NUMBER, &mut items, &mut last);
        assert_eq!(last, 5);
        assert!(ensure_unset(&items).is_ok());
    }
}
