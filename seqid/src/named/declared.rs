//! The sequences the program declares: every `#[derive(Document)]` of a type without
//! generic parameters registers its sequences (the primary and the others), with the
//! type's path, before `main` runs (`inventory`). A sequence named at run time
//! (`db.sequence("order")`) looks them up by name, to take the options of the type that
//! declares it where the call gives none and to refuse those that differ
//! (`named`): a number on its own then never comes from another counter than the
//! type's, nor starts it elsewhere.

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::schema::sequence::{Sequence, Strategy};

/// One type's declarations, as the derive registers them. Not public API: made by the
/// derive's expansion (`__private`).
#[doc(hidden)]
pub struct Declared {
    type_name: &'static str,
    primary: &'static Sequence,
    others: &'static [Sequence],
}

impl Declared {
    /// The declarations of the type at `type_name` (its module path and name).
    pub const fn new(
        type_name: &'static str,
        primary: &'static Sequence,
        others: &'static [Sequence],
    ) -> Self {
        Declared {
            type_name,
            primary,
            others,
        }
    }
}

inventory::collect!(Declared);

/// A sequence declared by a type: the type's path, and the sequence as declared.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Declaration {
    pub type_name: &'static str,
    pub seq: &'static Sequence,
}

/// The declared sequences named `name` that keep a counter (an optimistic sequence takes
/// its ids from its collection, and shares nothing with a number on its own), in the order
/// of their types' paths.
pub(crate) fn named(name: &str) -> &'static [Declaration] {
    by_name().get(name).map_or(&[], Vec::as_slice)
}

/// Every declared sequence that numbers `field` of `collection`, whatever its name and
/// strategy.
pub(crate) fn numbering(collection: &str, field: &str) -> impl Iterator<Item = Declaration> {
    let (collection, field) = (collection.to_owned(), field.to_owned());
    read()
        .all
        .iter()
        .filter(move |declared| {
            declared.seq.collection == collection && declared.seq.field == field
        })
        .copied()
}

/// The registered declarations, read once: they are all registered before `main`, and
/// never change.
struct Read {
    /// Every one, in the order of their types' paths.
    all: Vec<Declaration>,
    /// Those that keep a counter, by name.
    by_name: HashMap<&'static str, Vec<Declaration>>,
}

fn by_name() -> &'static HashMap<&'static str, Vec<Declaration>> {
    &read().by_name
}

fn read() -> &'static Read {
    static READ: OnceLock<Read> = OnceLock::new();
    READ.get_or_init(|| {
        let mut all = Vec::new();
        for declared in inventory::iter::<Declared> {
            let sequences = std::iter::once(declared.primary).chain(declared.others);
            all.extend(sequences.map(|seq| Declaration {
                type_name: declared.type_name,
                seq,
            }));
        }
        all.sort_by_key(|declared| (declared.type_name, declared.seq.field));
        let mut by_name: HashMap<&'static str, Vec<Declaration>> = HashMap::new();
        for declared in &all {
            if !matches!(declared.seq.strategy, Strategy::Optimistic { .. }) {
                by_name
                    .entry(declared.seq.name)
                    .or_default()
                    .push(*declared);
            }
        }
        Read { all, by_name }
    })
}
