//! [`FindOne`]: a document by its number, in its scope for a scoped sequence, or by its
//! display code.

use std::marker::PhantomData;

use serde::de::DeserializeOwned;

use crate::api::sequences::AsDatabase;
use crate::base::error::{Doing, Error};
use crate::base::future::BoxFuture;
use crate::base::server::PRIMARY;
use crate::call::registry::Route;
use crate::fields::scope::GivenScope;
use crate::round_trip::indexes;
use crate::schema::display::DisplayCode;
use crate::schema::model::Model;
use crate::schema::sequence::Sequence;

/// `DeserializeOwned`, in seqid's words: the bound of the calls that make a find
/// (`find_by_id`, `SequenceOf::find`, the derive's `find_by_<field>`), so that a type that
/// is not `Deserialize` is refused there with this message, rather than at the find's
/// `.await` as a value that "is not a future". `do_not_recommend` keeps rustc's notes on
/// this trait, without serde's `Deserialize` behind it and the list of its implementors.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not `serde::Deserialize`: seqid cannot read it back",
    label = "this find deserializes the stored document into `{Self}`",
    note = "add `#[derive(serde::Deserialize)]` to `{Self}`, next to `serde::Serialize`"
)]
pub trait Deserializable: DeserializeOwned {}

#[diagnostic::do_not_recommend]
impl<T: DeserializeOwned> Deserializable for T {}

/// What a find gives: the document, or `None`.
type Found<T> = Result<Option<T>, Error>;

/// Finds one document: by the number its sequence gave it, from
/// [`SequenceOf::find`](crate::SequenceOf::find) (`Ticket::sequence().find(&db, 1041)`), or
/// with `BY_CODE`, by its display code, from the `find_by_<field>` function the derive
/// writes for each `#[seq_display]` field (`Invoice::find_by_code(&db, "INV-2026-0042")` for
/// a field named `code`). Await it for the document, or `None`. Read from the primary;
/// numbers compare by value, so a document stored as Int32 by another tool is found by its
/// `i64` number; a code is found by its field's unique index (made by
/// [`create_indexes`](crate::Document::create_indexes)).
///
/// `S` is the sequence's scope as a type ([`scoped`](crate::scoped)): `.scope(...)` takes a
/// value of it, checked at compile time. A code is unique across scopes: a find by code
/// takes none.
///
/// ```no_run
/// # use seqid::Document;
/// # #[derive(serde::Serialize, serde::Deserialize, Document)]
/// # #[seq_id(collection = "invoices")]
/// # struct Invoice {
/// #     year: i32,
/// #     #[seq_id("invoice", scope = "year")]
/// #     number: i64,
/// #     #[seq_display("INV-{year}-{number:04}")]
/// #     code: String,
/// # }
/// # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
/// let by_number = Invoice::sequence().find(&db, 42).scope(2026).await?;
/// let by_code: Option<Invoice> = Invoice::find_by_code(&db, "INV-2026-0042").await?;
/// # Ok(()) }
/// ```
#[must_use = "a find does nothing until it is awaited"]
pub struct FindOne<'a, T: Model, S = <T as Model>::Scope, const BY_CODE: bool = false> {
    db: Route<'a>,
    seq: &'static Sequence,
    id: i128,
    /// The scope given (`.scope(..)`): a field not named `scope`, so that rustc calls
    /// `.scope(..)` on a find by code a missing method.
    given_scope: GivenScope,
    /// With `BY_CODE`: the display field and the code.
    code: Option<(&'static DisplayCode, &'a str)>,
    // The find itself, set by the constructors, which require `T: Deserializable`, so that
    // awaiting requires nothing (see `Deserializable`).
    run: for<'r> fn(FindOne<'r, T, S, BY_CODE>) -> BoxFuture<'r, Found<T>>,
    _scope: PhantomData<fn() -> S>,
}

impl<'a, T: Model, S, const BY_CODE: bool> FindOne<'a, T, S, BY_CODE> {
    fn with(
        db: Route<'a>,
        seq: &'static Sequence,
        id: i128,
        code: Option<(&'static DisplayCode, &'a str)>,
    ) -> Self
    where
        T: Deserializable,
    {
        FindOne {
            db,
            seq,
            id,
            given_scope: GivenScope::default(),
            code,
            run: |find| {
                let FindOne {
                    db,
                    seq,
                    id,
                    given_scope: scope,
                    code,
                    ..
                } = find;
                // In a block: boxed bare, `by`'s future is refused unless `T: 'static`.
                Box::pin(async move { by(db, seq, id, scope, code).await })
            },
            _scope: PhantomData,
        }
    }
}

impl<'a, T: Model, S> FindOne<'a, T, S> {
    pub(crate) fn new(db: Route<'a>, seq: &'static Sequence, id: impl Into<i128>) -> Self
    where
        T: Deserializable,
    {
        FindOne::with(db, seq, id.into(), None)
    }

    scope_setters! {
        given_scope,
        scope {
            /// The scope the number belongs to, for a scoped sequence: a value of its scope
            /// field's type, or a tuple of values in the declared order (numbers repeat across
            /// scopes); a value of another type does not compile ([`scoped`](crate::scoped)).
            /// Required for a scoped sequence ([`ErrorKind::InvalidScope`](crate::error::ErrorKind::InvalidScope) without it); an unscoped
            /// one takes none.
            ///
            /// ```no_run
            /// # use seqid::Document;
            /// # #[derive(serde::Serialize, serde::Deserialize, Document)]
            /// # #[seq_id(collection = "tickets")]
            /// # struct Ticket { project: String, #[seq_id("ticket", scope = "project")] number: i64 }
            /// # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
            /// let ticket = Ticket::sequence().find(&db, 1041).scope("apollo").await?;
            /// # Ok(()) }
            /// ```
        }
        unchecked {
            /// [`scope`](Self::scope) for a scope known only at run time (from a request, in code
            /// generic over the type): any serializable value, checked when the find runs against
            /// the scope fields' Rust types ([`Sequence::scope_types`]): a value none of the
            /// type's documents can hold is [`ErrorKind::InvalidScope`](crate::error::ErrorKind::InvalidScope), naming the field's type.
            ///
            /// ```no_run
            /// # use seqid::Document;
            /// # #[derive(serde::Serialize, serde::Deserialize, Document)]
            /// # #[seq_id(collection = "tickets")]
            /// # struct Ticket { project: String, #[seq_id("ticket", scope = "project")] number: i64 }
            /// # async fn run(db: mongodb::Database, project: mongodb::bson::Bson) -> Result<(), seqid::Error> {
            /// let ticket = Ticket::sequence().find(&db, 1041).scope_unchecked(project).await?;
            /// # Ok(()) }
            /// ```
        }
    }
}

awaits_run!(['a, T: Model, S, const BY_CODE: bool] FindOne<'a, T, S, BY_CODE> => BoxFuture<'a, Found<T>>, Option<T>);

/// The find of a [`FindOne`]: by `code` if given, else by `id` in `scope`.
async fn by<T: Model + Deserializable>(
    db: Route<'_>,
    seq: &'static Sequence,
    id: i128,
    scope: GivenScope,
    code: Option<(&'static DisplayCode, &str)>,
) -> Found<T> {
    if let Some((display, code)) = code {
        let filter = mongodb::bson::doc! { display.field: code };
        return find_one(db, seq, filter, || {
            format!("finding {} {code:?} in `{}`", display.field, seq.collection)
        })
        .await;
    }
    let scope = scope.resolve(seq)?;
    // A number beyond i64 cannot have come from a sequence: not stored.
    let Ok(id) = i64::try_from(id) else {
        return Ok(None);
    };
    find_one(db, seq, indexes::at(seq, &scope, id), || {
        let (field, collection) = (seq.field, seq.collection);
        format!("finding {field} {id}{} in `{collection}`", scope.in_scope())
    })
    .await
}

/// The document `filter` finds in `seq`'s collection, read from the primary; `doing` says
/// what failed.
async fn find_one<T: DeserializeOwned + Send + Sync>(
    db: Route<'_>,
    seq: &'static Sequence,
    filter: mongodb::bson::Document,
    doing: impl FnOnce() -> String,
) -> Found<T> {
    db.db
        .collection::<T>(seq.collection)
        .find_one(filter)
        .selection_criteria(PRIMARY)
        .await
        .doing(seq, doing)
}

/// For the derive's `find_by_<field>`: the find of `code` in the field of `display`.
#[doc(hidden)]
pub fn find_by_code<'a, T: Model + Deserializable>(
    db: &'a impl AsDatabase,
    display: &'static DisplayCode,
    code: &'a str,
) -> FindOne<'a, T, (), true> {
    FindOne::with(db.route(), display.sequence, 0, Some((display, code)))
}
