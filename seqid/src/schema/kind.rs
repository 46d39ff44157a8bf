//! What a [`Document`](crate::Document) type's declaration makes it, as traits checked at
//! compile time: what its strategy offers ([`WithCounter`], [`Retrying`]), and whether it
//! declares a natural key ([`NaturalKeyed`]) or is numbered later ([`NumberedLater`]). A call
//! or a setter that cannot apply is a compile error that says why (`max_attempts` is the
//! optimistic loop's alone: [`Retrying`]).
//!
//! ```
//! use seqid::{Document, kind};
//! # use serde::Serialize;
//!
//! #[derive(Serialize, Document)]
//! #[seq_id("ticket", strategy = "optimistic")]
//! struct Ticket { _id: i64 }
//!
//! fn retrying<T: Document<Kind: kind::Retrying>>() {}
//! retrying::<Ticket>();
//! ```

/// A strategy, as the derive names it in `Model::Kind`: one of the markers below, which
/// say which strategy, and implemented by them only.
#[doc(hidden)]
pub trait Kind: sealed::Sealed + Send + Sync + 'static {}

/// `strategy = "counters"` (the default).
#[derive(Debug)]
#[doc(hidden)]
pub enum Counters {}

/// `strategy = "block"`.
#[derive(Debug)]
#[doc(hidden)]
pub enum Block {}

/// `strategy = "optimistic"`.
#[derive(Debug)]
#[doc(hidden)]
pub enum Optimistic {}

/// `strategy = "gapless"`.
#[derive(Debug)]
#[doc(hidden)]
pub enum Gapless {}

impl Kind for Counters {}
impl Kind for Block {}
impl Kind for Optimistic {}
impl Kind for Gapless {}

/// The strategies that keep a counter: all but `optimistic`. A
/// [`SequenceOf`](crate::SequenceOf) offers the counter's operations for these only, and
/// [`reserve_ids`](crate::Document::reserve_ids) reserves from them alone: on an optimistic
/// type the call is a compile error with this trait's message. Name it as a bound in
/// generic code over such types: `T: Document<Kind: WithCounter>`.
///
/// ```
/// use seqid::{Document, kind::WithCounter};
/// # use serde::Serialize;
///
/// #[derive(Serialize, Document)]
/// #[seq_id("ticket", strategy = "block")]
/// struct Ticket { _id: i64 }
///
/// #[derive(Serialize, Document)]
/// #[seq_id("draft", strategy = "optimistic")]
/// struct Draft { _id: i64 }
///
/// fn has_a_counter<T: Document<Kind: WithCounter>>() {}
/// has_a_counter::<Ticket>();
/// // has_a_counter::<Draft>(); // does not compile: no counter
/// ```
#[diagnostic::on_unimplemented(
    message = "this sequence has no counter: its strategy is `{Self}`",
    label = "the optimistic strategy takes the largest id + 1 and keeps no counter",
    note = "`reserve_ids`, `next`, `sync_counter` and the counter's other operations need `strategy = \"counters\"`, `\"block\"` or `\"gapless\"`"
)]
pub trait WithCounter: Kind {}

impl WithCounter for Counters {}
impl WithCounter for Block {}
impl WithCounter for Gapless {}

/// The strategy whose insert retries with another id when its id was taken: only
/// `optimistic`. Its loop is bounded per call with `max_attempts` and `time_budget`,
/// offered for it alone.
///
/// ```
/// use seqid::{Document, kind::Retrying};
/// # use serde::Serialize;
///
/// #[derive(Serialize, Document)]
/// #[seq_id("draft", strategy = "optimistic")]
/// struct Draft { _id: i64 }
///
/// #[derive(Serialize, Document)]
/// #[seq_id("ticket")]
/// struct Ticket { _id: i64 }
///
/// fn retries<T: Document<Kind: Retrying>>() {}
/// retries::<Draft>();
/// // retries::<Ticket>(); // does not compile: a counter's id is taken once
/// ```
#[diagnostic::on_unimplemented(
    message = "`max_attempts` and `time_budget` bound the optimistic loop's retries, and this type's strategy, `{Self}`, has no loop",
    label = "a counter's id is taken once and never retried with another",
    note = "they apply to `strategy = \"optimistic\"`; for a call of a counter-backed type, there is nothing to bound"
)]
pub trait Retrying: Kind {}

impl Retrying for Optimistic {}

/// A type that declares a natural key (`#[seq_key]` on its fields): the bound of
/// [`find_or_insert`](crate::Document::find_or_insert), so that a type without one is
/// refused at the call with this trait's message, and the bound of code generic over such
/// types. The derive implements it; a type without a declared key can still be found by a
/// key named per call, with [`.by(...)`](crate::action::FindOrInsert::by).
///
/// ```no_run
/// use seqid::kind::NaturalKeyed;
/// use seqid::{Document, Entry};
///
/// async fn ensure<T>(doc: &mut T, db: &seqid::Database) -> Result<Entry, seqid::Error>
/// where
///     T: Document + NaturalKeyed + serde::de::DeserializeOwned,
/// {
///     doc.find_or_insert(db).await
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` declares no natural key for `find_or_insert` to find it by",
    label = "`find_or_insert` finds the document by the fields marked `#[seq_key]`",
    note = "mark the field(s) that identify a `{Self}` with `#[seq_key]` (and make their unique index with `create_indexes`), or name them for this call with `.by(&[...])`"
)]
pub trait NaturalKeyed {}

/// A type whose sequence is numbered later (`numbered = "later"` on its field): the
/// bound of [`number_draft`](crate::Document::number_draft) and
/// [`number_drafts`](crate::Document::number_drafts), so that a type numbered by `insert`
/// is refused at the call. The derive implements it.
///
/// ```no_run
/// use seqid::kind::NumberedLater;
/// use seqid::{Document, Numbered};
///
/// async fn issue<T>(db: &seqid::Database, id: mongodb::bson::oid::ObjectId) -> Result<Numbered<T>, seqid::Error>
/// where
///     T: Document + NumberedLater + serde::de::DeserializeOwned,
/// {
///     T::number_draft(db, mongodb::bson::doc! { "_id": id }).await
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}`'s sequence is numbered by `insert`, not later",
    label = "`number_draft` numbers a stored draft of a sequence declared `numbered = \"later\"`",
    note = "declare the field's sequence with `numbered = \"later\"` (an `Option` field, left `None` in drafts) to number stored drafts when they are issued"
)]
pub trait NumberedLater {}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Counters {}
    impl Sealed for super::Block {}
    impl Sealed for super::Optimistic {}
    impl Sealed for super::Gapless {}
}
