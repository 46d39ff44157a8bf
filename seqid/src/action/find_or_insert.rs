//! [`FindOrInsert`]: the document with a natural key, inserted with the next id only
//! when no document holds that key.

/// A type that declares a natural key (`#[seq_key]` on its fields): the bound of
/// [`find_or_insert`](crate::Document::find_or_insert), so that a type without one is
/// refused at the call with this message. The derive implements it.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`{Self}` declares no natural key for `find_or_insert` to find it by",
    label = "`find_or_insert` finds the document by the fields marked `#[seq_key]`",
    note = "mark the field(s) that identify a `{Self}` with `#[seq_key]` (and make their unique index with `create_indexes`), or name them for this call with `find_or_insert_by`"
)]
pub trait NaturalKeyed: crate::Model {}
