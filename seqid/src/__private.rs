//! What `#[derive(Document)]` expands to refers to, as `::seqid::__private::...`: not public
//! API. Beside `lib.rs`, above every layer, since it names items of several.

pub use crate::api::action::find::{Deserializable, SequenceOnId, find_by_code, find_by_number};
pub use crate::api::action::find_or_insert::NaturalKeyed;
pub use crate::api::action::number::NumberedLater;
pub use crate::base::display::{Integer, display_code, integer, literal, number, text};
pub use crate::base::layout::construct::{custom, stepped};
pub use crate::base::sequence::construct::{BLANK, block, counters, gapless, optimistic};
pub use crate::state::allocator::LiveBlock;
pub use ::core;
pub use ::std::string::String;
pub use mongodb::bson::oid::ObjectId;

use crate::base::id::{AnyIdField, IdField};

/// A field of another sequence, as the runtime reads it: bounded on `IdField`, so that
/// a field type that cannot hold a number gets `IdField`'s message, at the type.
pub fn any_id<F: IdField>(field: &F) -> &dyn AnyIdField {
    field
}

/// [`any_id`], to fill the field.
pub fn any_id_mut<F: IdField>(field: &mut F) -> &mut dyn AnyIdField {
    field
}

/// The supertraits of `Model`, for the bound of the stand-in impl the derive emits
/// next to its errors (`for<'a> T: DocumentBounds` proves them without requiring
/// them). Not a re-export of `Serialize`, which would make rustc name serde's trait by
/// this path in messages.
pub trait DocumentBounds: serde::Serialize + Send + Sync {}

impl<T: serde::Serialize + Send + Sync + ?Sized> DocumentBounds for T {}
