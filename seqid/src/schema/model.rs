//! What a model is: the trait `#[derive(Document)]` implements, with the constants and the
//! field accessors every layer of the runtime works with. What a user does with a model
//! (insert, find, administer its counter) is [`Document`](crate::Document), on top.

use mongodb::bson::oid::ObjectId;
use serde::Serialize;

use crate::schema::display::{DisplayCode, Unshowable};
use crate::schema::id::{AnyIdField, IdField};
use crate::schema::item::{AnyItems, ItemsField};
use crate::schema::kind;
use crate::schema::sequence::Sequence;

/// The integer id of a [`Model`] type: `i64` for an `i64` or `Option<i64>` field. Public
/// signatures spell it out (`<T::Id as IdField>::Value`), so that docs show it.
pub(crate) type IdValue<T> = <<T as Model>::Id as IdField>::Value;

/// A struct whose `_id`, or another integer field, is taken from a sequence: what
/// `#[derive(Document)]` implements (constants and accessors, nothing else). Every such
/// type is a [`Document`](crate::Document), whose methods insert it.
///
/// Its items are read through this trait, which must be in scope to name them on a type:
///
/// ```
/// use seqid::{Document, Model, Strategy};
/// # use serde::Serialize;
///
/// #[derive(Serialize, Document)]
/// #[seq_id("userid", collection = "users")]
/// struct User {
///     #[serde(rename = "_id")]
///     id: i64,
///     name: String,
/// }
///
/// assert_eq!(User::SEQUENCE.name, "userid");
/// assert_eq!(User::SEQUENCE.strategy, Strategy::Counters);
/// let user = User { id: 7, name: "Ada".into() };
/// assert_eq!(*user.sequence_id(), 7);
/// ```
// `Serialize` directly, not through a helper trait carrying seqid's `on_unimplemented`
// (as `Deserializable` does for the finds): the derive's impl is checked against every
// supertrait of a supertrait, `Serialize` itself included, so a struct that is not
// `Serialize` would still get serde's message at the derive, with the helper's as a second
// error or as a note naming a hidden path, and these documented bounds would name a hidden
// trait.
pub trait Model: Serialize + Send + Sync + Sized {
    /// The sequence and strategy declared by `#[seq_id(...)]`.
    const SEQUENCE: Sequence;

    /// The type of the field the sequence fills (`_id`, or the field marked `#[seq_id]`).
    type Id: IdField;

    /// The strategy, as a type ([`kind`]): it decides which setters an insert offers.
    type Kind: kind::Kind;

    /// The scope of [`SEQUENCE`](Model::SEQUENCE), as a type ([`scoped`](crate::scoped)):
    /// what `.scope(...)` takes on its finds and its counter's operations, checked at
    /// compile time. `Fields` of the scope fields' types,
    /// `Unscoped` without a scope.
    ///
    /// ```
    /// use seqid::{Document, Model, scoped};
    ///
    /// #[derive(serde::Serialize, Document)]
    /// #[seq_id(collection = "tickets")]
    /// struct Ticket {
    ///     project: String,
    ///     #[seq_id("ticket", scope = "project")]
    ///     number: i64,
    /// }
    ///
    /// fn same<A: 'static, B: 'static>() -> bool {
    ///     std::any::TypeId::of::<A>() == std::any::TypeId::of::<B>()
    /// }
    /// assert!(same::<<Ticket as Model>::Scope, scoped::Fields<(String,)>>());
    /// ```
    type Scope;

    /// The id field.
    fn sequence_id(&self) -> &Self::Id;

    /// The id field, to fill it.
    fn sequence_id_mut(&mut self) -> &mut Self::Id;

    /// The document's `_id`, when the sequence fills another field and `_id` is an
    /// `Option<ObjectId>`: an insert fills it with a new `ObjectId` when it is `None`, so
    /// that the caller holds every id of what it stored, and sets it back to `None` with
    /// the sequence's field when the document is known not to be stored. An `ObjectId`
    /// the caller set is sent as it is and never changed. A document found with an
    /// `ObjectId` the insert made is its own, so a lost answer is settled by looking, as
    /// with `content_is_unique`. The derive implements it for
    /// such a field (written `Option<ObjectId>`, bson's `ObjectId`); `None` otherwise.
    ///
    /// ```
    /// use mongodb::bson::oid::ObjectId;
    /// use seqid::{Document, Model};
    /// # use serde::Serialize;
    ///
    /// #[derive(Serialize, Document)]
    /// #[seq_id(collection = "tickets")]
    /// struct Ticket {
    ///     #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    ///     id: Option<ObjectId>,
    ///     #[seq_id("ticket_number")]
    ///     number: i64,
    /// }
    ///
    /// let mut ticket = Ticket { id: None, number: 0 };
    /// assert_eq!(ticket.object_id_mut(), Some(&mut None));
    /// ```
    fn object_id_mut(&mut self) -> Option<&mut Option<ObjectId>> {
        None
    }

    /// The document's other sequences, when it declares several: every `#[seq_id]` but
    /// the one of [`SEQUENCE`](Model::SEQUENCE), in the order of the fields. An insert
    /// fills their fields with the primary's, writes the document once, and unsets them
    /// all together or keeps them all together. Empty for a document with one sequence.
    ///
    /// ```
    /// use seqid::{Document, Model};
    /// # use serde::Serialize;
    ///
    /// #[derive(Serialize, Document)]
    /// #[seq_id("issue_id", collection = "issues")]
    /// struct Issue {
    ///     #[serde(rename = "_id")]
    ///     id: i64,
    ///     repo: String,
    ///     #[seq_id("issue_number", scope = "repo", strategy = "block")]
    ///     number: i64,
    /// }
    ///
    /// assert_eq!(Issue::SEQUENCE.name, "issue_id");
    /// assert_eq!(Issue::OTHERS[0].name, "issue_number");
    /// assert_eq!(Issue::OTHERS[0].scope, ["repo"]);
    /// ```
    const OTHERS: &'static [Sequence] = &[];

    /// The field of `OTHERS[index]`, or `None` past the end.
    ///
    /// ```
    /// # use seqid::{Document, Model};
    /// # use serde::Serialize;
    /// # #[derive(Serialize, Document)]
    /// # #[seq_id("issue_id", collection = "issues")]
    /// # struct Issue {
    /// #     #[serde(rename = "_id")]
    /// #     id: i64,
    /// #     repo: String,
    /// #     #[seq_id("issue_number", scope = "repo", strategy = "block")]
    /// #     number: i64,
    /// # }
    /// let issue = Issue { id: 0, repo: "seqid".into(), number: 7 };
    /// assert_eq!(issue.other_id(0).and_then(|field| field.value()), Some(7));
    /// assert!(issue.other_id(1).is_none());
    /// ```
    fn other_id(&self, index: usize) -> Option<&dyn AnyIdField> {
        let _ = index;
        None
    }

    /// The field of `OTHERS[index]`, to fill it, or `None` past the end.
    ///
    /// ```
    /// # use seqid::{Document, Model};
    /// # use serde::Serialize;
    /// # #[derive(Serialize, Document)]
    /// # #[seq_id("issue_id", collection = "issues")]
    /// # struct Issue {
    /// #     #[serde(rename = "_id")]
    /// #     id: i64,
    /// #     repo: String,
    /// #     #[seq_id("issue_number", scope = "repo", strategy = "block")]
    /// #     number: i64,
    /// # }
    /// let mut issue = Issue { id: 0, repo: "seqid".into(), number: 0 };
    /// assert!(issue.other_id_mut(0).unwrap().fill(8));
    /// assert_eq!(issue.number, 8);
    /// ```
    fn other_id_mut(&mut self, index: usize) -> Option<&mut dyn AnyIdField> {
        let _ = index;
        None
    }

    /// The fields of the document's natural key, as serialized, in the order of the
    /// fields: each field marked `#[seq_key]`. [`find_or_insert`](crate::Document::find_or_insert)
    /// finds the document by their values and inserts it (taking an id) only when none
    /// holds them; [`create_indexes`](crate::Document::create_indexes) makes the unique
    /// index on them it relies on. Empty for a document without one.
    ///
    /// ```
    /// use seqid::{Document, Model};
    /// # use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Serialize, Deserialize, Document)]
    /// #[seq_id("customer", collection = "customers")]
    /// struct Customer {
    ///     #[serde(rename = "_id")]
    ///     id: i64,
    ///     #[seq_key]
    ///     email: String,
    ///     name: String,
    /// }
    ///
    /// assert_eq!(Customer::NATURAL_KEY, ["email"]);
    /// ```
    const NATURAL_KEY: &'static [&'static str] = &[];

    /// Whether the sequence is numbered later (`numbered = "later"` on its field): `insert`
    /// does not number such a type (it stores drafts, which the driver writes as they
    /// are), and [`number_draft`](crate::Document::number_draft) gives a stored draft its
    /// number when it is issued. `false` for every other type.
    ///
    /// ```
    /// use seqid::{Document, Model};
    /// # use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Serialize, Deserialize, Document)]
    /// #[seq_id(collection = "invoices")]
    /// struct Invoice {
    ///     #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    ///     id: Option<mongodb::bson::oid::ObjectId>,
    ///     #[seq_id("invoice", strategy = "gapless", numbered = "later")]
    ///     number: Option<i64>,
    /// }
    ///
    /// assert!(Invoice::NUMBERED_LATER);
    /// ```
    const NUMBERED_LATER: bool = false;

    /// The fields that hold display codes (`#[seq_display("...")]`), in the order of the
    /// fields: the insert writes each from the document's numbers and fields, and stores
    /// it with the document. Empty for a document without one.
    ///
    /// ```
    /// use seqid::{Document, Model};
    /// # use serde::Serialize;
    ///
    /// #[derive(Serialize, Document)]
    /// #[seq_id("invoice", collection = "invoices")]
    /// struct Invoice {
    ///     #[serde(rename = "_id")]
    ///     id: i64,
    ///     #[seq_display("INV-{id:06}")]
    ///     code: String,
    /// }
    ///
    /// assert_eq!(Invoice::DISPLAYS[0].format, "INV-{id:06}");
    /// ```
    const DISPLAYS: &'static [DisplayCode] = &[];

    /// The field of `DISPLAYS[index]`, or `None` past the end.
    ///
    /// ```
    /// # use seqid::{Document, Model};
    /// # use serde::Serialize;
    /// # #[derive(Serialize, Document)]
    /// # #[seq_id("invoice", collection = "invoices")]
    /// # struct Invoice { #[serde(rename = "_id")] id: i64, #[seq_display("INV-{id:06}")] code: String }
    /// let invoice = Invoice { id: 42, code: "INV-000042".into() };
    /// assert_eq!(invoice.display_field(0).map(String::as_str), Some("INV-000042"));
    /// ```
    fn display_field(&self, index: usize) -> Option<&String> {
        let _ = index;
        None
    }

    /// The field of `DISPLAYS[index]`, to write the code into it, or `None` past the end.
    ///
    /// ```
    /// # use seqid::{Document, Model};
    /// # use serde::Serialize;
    /// # #[derive(Serialize, Document)]
    /// # #[seq_id("invoice", collection = "invoices")]
    /// # struct Invoice { #[serde(rename = "_id")] id: i64, #[seq_display("INV-{id:06}")] code: String }
    /// let mut invoice = Invoice { id: 42, code: String::new() };
    /// invoice.display_field_mut(0).unwrap().push_str("INV-000042");
    /// assert_eq!(invoice.code, "INV-000042");
    /// ```
    fn display_field_mut(&mut self, index: usize) -> Option<&mut String> {
        let _ = index;
        None
    }

    /// Writes the code of `DISPLAYS[index]` into `out`, from the document's fields as they
    /// are (a number not filled yet writes nothing), or says which string value would make
    /// it ambiguous. Nothing past the end.
    ///
    /// ```
    /// # use seqid::{Document, Model};
    /// # use serde::Serialize;
    /// # #[derive(Serialize, Document)]
    /// # #[seq_id("invoice", collection = "invoices")]
    /// # struct Invoice { #[serde(rename = "_id")] id: i64, #[seq_display("INV-{id:06}")] code: String }
    /// let invoice = Invoice { id: 42, code: String::new() };
    /// let mut code = String::new();
    /// invoice.write_code(0, &mut code).unwrap();
    /// assert_eq!(code, "INV-000042");
    /// ```
    fn write_code(&self, index: usize, out: &mut String) -> Result<(), Unshowable> {
        let _ = (index, out);
        Ok(())
    }

    /// The document's arrays of numbered items (`#[seq_items(last = "...")]` on a
    /// `Vec` of a [`seqid::Item`](crate::Item) type), in the order of the fields: each
    /// insert numbers their items from the item type's start, and sets each array's mark,
    /// with no round trip more; the derive's `append_<field>` appends to a stored document.
    /// Empty for a document without one.
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
    /// ```
    const ITEMS: &'static [ItemsField] = &[];

    /// The array of `ITEMS[index]` and its mark, or `None` past the end.
    ///
    /// ```
    /// # use seqid::{Document, Item, Model};
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Serialize, Deserialize, Item)]
    /// # struct Line { #[seq_no] no: i64, sku: String }
    /// # #[derive(Serialize, Deserialize, Document)]
    /// # #[seq_id("order", collection = "orders")]
    /// # struct Order { #[serde(rename = "_id")] id: i64, #[seq_items(last = "lines_last")] lines: Vec<Line>, lines_last: i64 }
    /// let order = Order { id: 1, lines: vec![Line { no: 1, sku: "A".into() }], lines_last: 1 };
    /// let (lines, last) = order.items(0).unwrap();
    /// assert_eq!((lines.count(), last.value()), (1, Some(1)));
    /// ```
    fn items(&self, index: usize) -> Option<(&dyn AnyItems, &dyn AnyIdField)> {
        let _ = index;
        None
    }

    /// The array of `ITEMS[index]` and its mark, to number them, or `None` past the end.
    ///
    /// ```
    /// # use seqid::{Document, Item, Model};
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Serialize, Deserialize, Item)]
    /// # struct Line { #[seq_no] no: i64, sku: String }
    /// # #[derive(Serialize, Deserialize, Document)]
    /// # #[seq_id("order", collection = "orders")]
    /// # struct Order { #[serde(rename = "_id")] id: i64, #[seq_items(last = "lines_last")] lines: Vec<Line>, lines_last: i64 }
    /// let mut order = Order { id: 1, lines: vec![Line { no: 0, sku: "A".into() }], lines_last: 0 };
    /// let (lines, last) = order.items_mut(0).unwrap();
    /// assert!(lines.set_number(0, 1) && last.fill(1));
    /// assert_eq!((order.lines[0].no, order.lines_last), (1, 1));
    /// ```
    fn items_mut(&mut self, index: usize) -> Option<(&mut dyn AnyItems, &mut dyn AnyIdField)> {
        let _ = index;
        None
    }
}
