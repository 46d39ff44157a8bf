//! What `#[derive(Document)]` expands to refers to, as `::seqid::__private::...`: not public
//! API. Beside `lib.rs`, above every layer, since it names items of several.

pub use crate::api::action::find::{Deserializable, find_by_code};
pub use crate::api::action::future::InsertFuture;
pub use crate::api::action::items::append_items;
pub use crate::named::declared::Declared;
pub use crate::schema::display::{
    DisplayCode, Integer, Unshowable, display_code, integer, literal, number, text,
};
pub use crate::schema::id::AnyIdField;
pub use crate::schema::item::{APPENDS_KEPT, AnyItems, ItemNumber, ItemsField};
pub use crate::schema::kind::{NaturalKeyed, NumberedLater};
pub use crate::schema::layout::construct::{custom, stepped};
pub use crate::schema::sequence::construct::{BLANK, block, counters, gapless, optimistic};
pub use crate::state::allocator::LiveBlock;
pub use ::core;
pub use ::inventory;
pub use ::std::string::String;
pub use mongodb::bson::Document as BsonDocument;
pub use mongodb::bson::oid::ObjectId;

use crate::deployment::known::Known;
use crate::schema::id::IdField;
use crate::schema::item::Item;

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

/// An array of items and its mark, as the runtime reads them (`Model::items`), bounded on
/// `Item` and `IdField`.
pub fn items<'d, I: Item, L: IdField>(
    items: &'d Vec<I>,
    last: &'d L,
) -> (&'d dyn AnyItems, &'d dyn AnyIdField) {
    (items, last)
}

/// [`items`], to number them.
pub fn items_mut<'d, I: Item, L: IdField>(
    items: &'d mut Vec<I>,
    last: &'d mut L,
) -> (&'d mut dyn AnyItems, &'d mut dyn AnyIdField) {
    (items, last)
}

/// For tests: appends of items to `db` go the conditional way (a read, then an update
/// conditional on the mark), as on a server without update pipelines, for the rest of
/// the process.
pub fn items_without_pipelines(db: &mongodb::Database) {
    Known::of_process().keep_no_pipelines(db);
}
