//! [`NumberDraft`]: stored drafts of a sequence numbered later
//! (`numbered = "later"`) get their numbers when they are issued.

use mongodb::bson::Document as BsonDocument;

use super::find::Deserializable;
use super::future::InsertFuture;
use crate::call::context::Call;
use crate::call::registry::Route;
use crate::insert::later::{self, Issue, Numbered};
use crate::schema::model::Model;

/// Numbers the stored draft a filter finds, from
/// [`Document::number_draft`](crate::Document::number_draft): await it for the
/// [`Numbered`] document. With `MANY`, every stored draft the filter finds, in order, from
/// [`Document::number_drafts`](crate::Document::number_drafts): await it for the documents
/// this call numbered, in that order.
#[must_use = "numbering drafts does nothing until it is awaited"]
pub struct NumberDraft<'a, T: Model + 'a, const MANY: bool = false> {
    db: Route<'a>,
    call: Call<'a>,
    filter: BsonDocument,
    issue: Issue,
    // The calls themselves, for one draft and for many, set by `new`, which requires
    // `T: Deserializable` (see `Deserializable`).
    one: Run<'a, Numbered<T>>,
    many: Run<'a, Vec<T>>,
}

/// A numbering of drafts, given its filter, database, options and issue.
type Run<'a, V> = fn(BsonDocument, Route<'a>, Call<'a>, Issue) -> InsertFuture<'a, V>;

impl<'a, T: Model, const MANY: bool> NumberDraft<'a, T, MANY> {
    pub(crate) fn new(db: Route<'a>, filter: BsonDocument) -> Self
    where
        T: Deserializable,
    {
        NumberDraft {
            db,
            call: Call::default(),
            filter,
            issue: Issue::default(),
            one: |filter, db, call, issue| {
                InsertFuture::run::<T>("number_draft", 1, db, call, move |cx| {
                    Box::pin(async move { later::number_draft(filter, &issue, cx).await })
                })
            },
            // How many drafts the filter finds is not known yet.
            many: |filter, db, call, issue| {
                InsertFuture::run::<T>("number_drafts", 0, db, call, move |cx| {
                    Box::pin(async move { later::number_drafts(filter, &issue, cx).await })
                })
            },
        }
    }

    session!(
        /// Runs it in `session`, and in its transaction if one is running (required
        /// for a gapless sequence, whose number the transaction takes back if it
        /// aborts).
        ///
        /// ```no_run
        /// # use seqid::Document;
        /// # use mongodb::bson::doc;
        /// # #[derive(serde::Serialize, serde::Deserialize, Document)]
        /// # #[seq_id(collection = "invoices")]
        /// # struct Invoice { #[serde(rename = "_id", skip_serializing_if = "Option::is_none")] id: Option<mongodb::bson::oid::ObjectId>,
        /// #   #[seq_id("invoice", strategy = "gapless", numbered = "later")] number: Option<i64>, status: String }
        /// # async fn run(db: mongodb::Database, mut session: mongodb::ClientSession, id: mongodb::bson::oid::ObjectId) -> Result<(), seqid::Error> {
        /// let done = Invoice::number_draft(&db, doc! { "_id": id }).session(&mut session).await?;
        /// # Ok(()) }
        /// ```
    );

    /// Sets these fields in the same update as the number, the caller's own change
    /// that makes the document issued (`{ "status": "issued" }`): the number and
    /// the change are written together, or neither. Not the number's field, its
    /// codes or `_id` ([`ErrorKind::InvalidOption`](crate::error::ErrorKind::InvalidOption)), nor
    /// a scope field or a key that writes into one (`"year"`, `"year.x"`): the
    /// number comes from the counter of the scope the draft has when it is issued,
    /// so change the scope with the driver before numbering it.
    ///
    /// ```no_run
    /// # use seqid::Document;
    /// # use mongodb::bson::doc;
    /// # #[derive(serde::Serialize, serde::Deserialize, Document)]
    /// # #[seq_id(collection = "invoices")]
    /// # struct Invoice { #[serde(rename = "_id", skip_serializing_if = "Option::is_none")] id: Option<mongodb::bson::oid::ObjectId>,
    /// #   #[seq_id("invoice", strategy = "gapless", numbered = "later")] number: Option<i64>, status: String }
    /// # async fn run(db: mongodb::Database, mut session: mongodb::ClientSession, id: mongodb::bson::oid::ObjectId) -> Result<(), seqid::Error> {
    /// let done = Invoice::number_draft(&db, doc! { "_id": id })
    ///     .set(doc! { "status": "issued" })
    ///     .session(&mut session)
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub fn set(mut self, fields: BsonDocument) -> Self {
        self.issue.set = fields;
        self
    }
}

impl<'a, T: Model> std::future::IntoFuture for NumberDraft<'a, T> {
    type Output = Result<Numbered<T>, crate::base::error::Error>;
    type IntoFuture = InsertFuture<'a, Numbered<T>>;

    fn into_future(self) -> Self::IntoFuture {
        (self.one)(self.filter, self.db, self.call, self.issue)
    }
}

impl<'a, T: Model> std::future::IntoFuture for NumberDraft<'a, T, true> {
    type Output = Result<Vec<T>, crate::base::error::Error>;
    type IntoFuture = InsertFuture<'a, Vec<T>>;

    fn into_future(self) -> Self::IntoFuture {
        (self.many)(self.filter, self.db, self.call, self.issue)
    }
}

impl<'a, T: Model> NumberDraft<'a, T, true> {
    /// The order the numbers are handed out in, as a sort document (`{ "issued_at": 1 }`);
    /// `_id` ascending by default. Within each scope the drafts get increasing numbers in
    /// this order.
    ///
    /// ```no_run
    /// # use seqid::Document;
    /// # use mongodb::bson::doc;
    /// # #[derive(serde::Serialize, serde::Deserialize, Document)]
    /// # #[seq_id(collection = "invoices")]
    /// # struct Invoice { #[serde(rename = "_id", skip_serializing_if = "Option::is_none")] id: Option<mongodb::bson::oid::ObjectId>,
    /// #   #[seq_id("invoice", numbered = "later")] number: Option<i64>, created: i64 }
    /// # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
    /// let numbered = Invoice::number_drafts(&db, doc! {}).order(doc! { "created": 1 }).await?;
    /// # Ok(()) }
    /// ```
    pub fn order(mut self, sort: BsonDocument) -> Self {
        self.issue.order = Some(sort);
        self
    }
}
