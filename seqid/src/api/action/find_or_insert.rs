//! [`FindOrInsert`]: the document with a natural key, inserted with the next id only
//! when no document holds that key.

use super::find::Deserializable;
use super::future::InsertFuture;
use crate::base::error::Error;
use crate::base::model::Model;
use crate::base::natural::{Entry, NaturalKey};
use crate::insert::{natural, natural_many};
use crate::state::context::Call;
use crate::state::registry::Route;

/// A type that declares a natural key (`#[seq_key]` on its fields): the bound of
/// [`find_or_insert`](crate::Document::find_or_insert), so that a type without one is
/// refused at the call with this trait's message, and the bound of code generic over such
/// types. The derive implements it; a type without a declared key can still be found by a
/// key named per call, with [`find_or_insert_by`](crate::Document::find_or_insert_by).
///
/// ```no_run
/// use seqid::{Document, Entry, NaturalKeyed};
///
/// async fn ensure<T>(doc: &mut T, db: &seqid::Database) -> Result<Entry, seqid::Error>
/// where
///     T: NaturalKeyed + serde::de::DeserializeOwned,
/// {
///     doc.find_or_insert(db).await
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` declares no natural key for `find_or_insert` to find it by",
    label = "`find_or_insert` finds the document by the fields marked `#[seq_key]`",
    note = "mark the field(s) that identify a `{Self}` with `#[seq_key]` (and make their unique index with `create_indexes`), or name them for this call with `find_or_insert_by`"
)]
pub trait NaturalKeyed: crate::base::model::Model {}

/// Finds the document with the natural key of the one given, or inserts it with the next
/// id, from [`Document::find_or_insert`](crate::Document::find_or_insert) or
/// [`Document::find_or_insert_by`](crate::Document::find_or_insert_by): await it for the
/// [`Entry`], the document now holding the stored one either way. Options are set by
/// method, as an [`Insert`](super::Insert)'s.
#[must_use = "a find_or_insert does nothing until it is awaited"]
pub struct FindOrInsert<'a, T: Model> {
    doc: &'a mut T,
    db: Route<'a>,
    pub(super) call: Call<'a>,
    key: Result<NaturalKey, Error>,
    // The call itself, set by `new`, which requires `T: Deserializable`, so that awaiting
    // requires nothing (see `Deserializable`).
    run: for<'r> fn(FindOrInsert<'r, T>) -> InsertFuture<'r, Entry>,
}

impl<'a, T: Model> FindOrInsert<'a, T> {
    pub(crate) fn new(doc: &'a mut T, db: Route<'a>, key: Result<NaturalKey, Error>) -> Self
    where
        T: Deserializable,
    {
        FindOrInsert {
            doc,
            db,
            call: Call::default(),
            key,
            run: |action| {
                let (doc, db, call, key) = (action.doc, action.db, action.call, action.key);
                let insert = Box::pin(natural::find_or_insert(doc, db, call, key));
                InsertFuture::of::<T>("find_or_insert", 1, insert).scoped(&T::SEQUENCE)
            },
        }
    }
}

awaits_run!(['a, T: Model] FindOrInsert<'a, T> => InsertFuture<'a, Entry>, Entry);

/// [`FindOrInsert`] for many documents, from
/// [`Document::find_or_insert_many`](crate::Document::find_or_insert_many) or
/// [`Document::find_or_insert_many_by`](crate::Document::find_or_insert_many_by): await it
/// for an [`Entry`] per document, in order, each document now holding the stored one.
#[must_use = "a find_or_insert_many does nothing until it is awaited"]
pub struct FindOrInsertMany<'a, T: Model> {
    docs: &'a mut [T],
    db: Route<'a>,
    pub(super) call: Call<'a>,
    key: Result<NaturalKey, Error>,
    // As `FindOrInsert`'s.
    run: for<'r> fn(FindOrInsertMany<'r, T>) -> InsertFuture<'r, Vec<Entry>>,
}

impl<'a, T: Model> FindOrInsertMany<'a, T> {
    pub(crate) fn new(docs: &'a mut [T], db: Route<'a>, key: Result<NaturalKey, Error>) -> Self
    where
        T: Deserializable,
    {
        FindOrInsertMany {
            docs,
            db,
            call: Call::default(),
            key,
            run: |action| {
                let (docs, db, call, key) = (action.docs, action.db, action.call, action.key);
                let count = docs.len();
                let insert = Box::pin(natural_many::find_or_insert_many(docs, db, call, key));
                InsertFuture::of::<T>("find_or_insert_many", count, insert)
            },
        }
    }
}

awaits_run!(['a, T: Model] FindOrInsertMany<'a, T> => InsertFuture<'a, Vec<Entry>>, Vec<Entry>);
