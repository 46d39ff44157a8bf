//! [`AppendItems`]: items appended to a stored document's array, numbered after its mark.

use std::marker::PhantomData;

use mongodb::bson::{Document as BsonDocument, oid::ObjectId};

use crate::base::error::Error;
use crate::base::future::BoxFuture;
use tracing::Instrument;

use crate::call::context::{Call, Context};
use crate::call::registry::Route;
use crate::call::span;
use crate::insert;
use crate::schema::item::{Item, ItemsField};
use crate::schema::model::Model;

/// Appends items to an array of the one stored document a filter finds, from the derive's
/// `append_<field>`: await it for their numbers, which are also written into the items.
///
/// The filter must find one document: none is [`ErrorKind::ItemsNotFound`](crate::error::ErrorKind::ItemsNotFound), more than one
/// [`ErrorKind::ItemsAmbiguous`](crate::error::ErrorKind::ItemsAmbiguous), both before anything is written. Name the document by its
/// `_id`: a filter that names `_id` by equality at its top level (`{ _id: v }` or
/// `{ _id: { $eq: v } }`, beside other conditions or not) goes in one round trip where the
/// server takes update pipelines (MongoDB 4.2+); any other filter costs one round trip more,
/// a `find` of at most two documents that tells which one it is (the append then goes to
/// that `_id`, where the filter still matches). Where the server takes no pipelines: a read
/// (which tells the same) and a conditional update. See the guide's
/// [items](crate::guide::items).
///
/// ```no_run
/// use mongodb::bson::doc;
/// use seqid::{Document, Item};
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
/// # async fn run(db: seqid::Database) -> Result<(), seqid::Error> {
/// let mut more = vec![Line { no: 0, sku: "B-2".into() }, Line { no: 0, sku: "C-3".into() }];
/// let numbers = Order::append_lines(&db, doc! { "_id": 7 }, &mut more).await?;
/// assert_eq!(more[0].no, numbers[0]);
/// # Ok(()) }
/// ```
#[must_use = "an append does nothing until it is awaited"]
pub struct AppendItems<'a, T: Model, I: Item> {
    db: Route<'a>,
    call: Call<'a>,
    spec: &'static ItemsField,
    filter: BsonDocument,
    items: &'a mut [I],
    token: Option<ObjectId>,
    model: PhantomData<fn() -> T>,
}

/// Not public API: what the derive's `append_<field>` returns.
pub fn append_items<'a, T: Model, I: Item>(
    db: &'a impl crate::api::sequences::AsDatabase,
    spec: &'static ItemsField,
    filter: BsonDocument,
    items: &'a mut [I],
) -> AppendItems<'a, T, I> {
    AppendItems {
        db: db.route(),
        call: Call::default(),
        spec,
        filter,
        items,
        token: None,
        model: PhantomData,
    }
}

impl<'a, T: Model, I: Item> AppendItems<'a, T, I> {
    session!(
        /// Runs the append in `session`, and in its transaction if one is running: the
        /// append is then part of the transaction, and an abort takes its numbers and the
        /// mark back with it (no gap).
        ///
        /// ```no_run
        /// # use mongodb::bson::doc;
        /// # use seqid::{Document, Item};
        /// # #[derive(serde::Serialize, serde::Deserialize, Item)]
        /// # struct Line { #[seq_no] no: i64 }
        /// # #[derive(serde::Serialize, serde::Deserialize, Document)]
        /// # #[seq_id("order", collection = "orders")]
        /// # struct Order { #[serde(rename = "_id")] id: i64, #[seq_items(last = "lines_last")] lines: Vec<Line>, lines_last: i64 }
        /// # async fn run(db: mongodb::Database, mut session: mongodb::ClientSession) -> Result<(), seqid::Error> {
        /// let mut more = vec![Line { no: 0 }];
        /// Order::append_lines(&db, doc! { "_id": 7 }, &mut more).session(&mut session).await?;
        /// # Ok(()) }
        /// ```
    );

    /// Sends the append with this token, the one an
    /// [`ErrorKind::ItemsOutcomeUnknown`](crate::error::ErrorKind::ItemsOutcomeUnknown) carries: if that append landed (its token is among
    /// the array's last 64 appends), nothing is appended and its numbers are answered;
    /// otherwise the items are appended, once.
    ///
    /// ```no_run
    /// # use mongodb::bson::doc;
    /// # use seqid::{Document, Item};
    /// # #[derive(serde::Serialize, serde::Deserialize, Item)]
    /// # struct Line { #[seq_no] no: i64 }
    /// # #[derive(serde::Serialize, serde::Deserialize, Document)]
    /// # #[seq_id("order", collection = "orders")]
    /// # struct Order { #[serde(rename = "_id")] id: i64, #[seq_items(last = "lines_last")] lines: Vec<Line>, lines_last: i64 }
    /// # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
    /// let mut more = vec![Line { no: 0 }];
    /// if let Err(error) = Order::append_lines(&db, doc! { "_id": 7 }, &mut more).await {
    ///     let seqid::error::ErrorKind::ItemsOutcomeUnknown { token, .. } = error.kind() else {
    ///         return Err(error);
    ///     };
    ///     Order::append_lines(&db, doc! { "_id": 7 }, &mut more).token(*token).await?;
    /// }
    /// # Ok(()) }
    /// ```
    pub fn token(mut self, token: ObjectId) -> Self {
        self.token = Some(token);
        self
    }
}

impl<'a, T: Model, I: Item + 'a> std::future::IntoFuture for AppendItems<'a, T, I> {
    type Output = Result<Vec<i64>, Error>;
    type IntoFuture = BoxFuture<'a, Result<Vec<i64>, Error>>;

    fn into_future(self) -> Self::IntoFuture {
        let AppendItems {
            db,
            mut call,
            spec,
            filter,
            items,
            token,
            ..
        } = self;
        call.appends = true;
        let seq = &T::SEQUENCE;
        let span = span::of_append(seq, spec, items.len());
        let traced = Context::run(seq, db, call, move |cx| {
            Box::pin(async move { insert::items::append(spec, filter, items, token, cx).await })
        });
        Box::pin(async move {
            traced
                .instrument(span.clone())
                .await
                .record_as(&span, "appended")
        })
    }
}
