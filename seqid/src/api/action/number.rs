//! [`NumberDraft`] and [`NumberDrafts`]: stored drafts of a sequence numbered later
//! (`numbered = "later"`) get their numbers when they are issued.

use mongodb::bson::Document as BsonDocument;

use super::find::Deserializable;
use super::future::InsertFuture;
use crate::base::model::Model;
use crate::insert::later::{self, Issue, Numbered};
use crate::state::context::Call;
use crate::state::registry::Route;

/// A call that numbers stored drafts: the action, its constructor, its setters (`$example`:
/// the action, in their examples) and its future, which awaits `later::$run` on `$count`
/// documents (0: not known yet) for a `$output`.
macro_rules! numbering {
    ($(#[$doc:meta])* $action:ident -> $output:ty = $run:ident($count:literal), $must_use:literal, $example:literal) => {
        $(#[$doc])*
        #[must_use = $must_use]
        pub struct $action<'a, T: Model + 'a> {
            db: Route<'a>,
            call: Call<'a>,
            filter: BsonDocument,
            issue: Issue,
            // The call itself, set by `new`, which requires `T: Deserializable` (see
            // `Deserializable`).
            run: fn($action<'a, T>) -> InsertFuture<'a, $output>,
        }

        impl<'a, T: Model> $action<'a, T> {
            pub(crate) fn new(db: Route<'a>, filter: BsonDocument) -> Self
            where
                T: Deserializable,
            {
                $action {
                    db,
                    call: Call::default(),
                    filter,
                    issue: Issue::default(),
                    run: |action| {
                        let insert = later::$run(action.filter, action.db, action.call, action.issue);
                        InsertFuture::of::<T>(stringify!($run), $count, Box::pin(insert))
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
                #[doc = concat!("let done = ", $example, ".session(&mut session).await?;")]
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
            #[doc = concat!("let done = ", $example, ".set(doc! { \"status\": \"issued\" }).session(&mut session).await?;")]
            /// # Ok(()) }
            /// ```
            pub fn set(mut self, fields: BsonDocument) -> Self {
                self.issue.set = fields;
                self
            }
        }

        awaits_run!(['a, T: Model] $action<'a, T> => InsertFuture<'a, $output>, $output);
    };
}

numbering!(
    /// Numbers the stored draft a filter finds, from
    /// [`Document::number_draft`](crate::Document::number_draft): await it for the
    /// [`Numbered`] document.
    NumberDraft -> Numbered<T> = number_draft(1),
    "a number_draft does nothing until it is awaited",
    "Invoice::number_draft(&db, doc! { \"_id\": id })"
);

numbering!(
    /// Numbers every stored draft a filter finds, in order, from
    /// [`Document::number_drafts`](crate::Document::number_drafts): await it for the documents
    /// this call numbered, in that order.
    NumberDrafts -> Vec<T> = number_drafts(0),
    "a number_drafts does nothing until it is awaited",
    "Invoice::number_drafts(&db, doc! { \"status\": \"approved\" })"
);

impl<'a, T: Model> NumberDrafts<'a, T> {
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
