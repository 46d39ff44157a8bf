//! [`Replace`]: a stored document written back whole, without moving an array's mark back.

use std::marker::PhantomData;

use crate::base::error::Error;
use crate::base::future::BoxFuture;
use crate::call::context::Call;
use crate::call::registry::Route;
use crate::insert::replace;
use crate::schema::model::Model;

/// Writes a stored document back whole, found by its `_id`, from
/// [`Document::replace`](crate::Document::replace): await it for `()`, once the server
/// acknowledged the write.
///
/// For a type with items, the stored marks and hidden lists of recent appends are read
/// first: a document whose mark is below the stored one (an append landed after it was
/// read) is refused, [`ErrorKind::ItemsStale`](crate::error::ErrorKind::ItemsStale), and nothing is written; otherwise one
/// `replace_one` conditioned on the marks and lists as read writes the document with the
/// lists kept. Two round trips; one, a `replace_one` by `_id`, for a type without items.
/// See the guide's [items](crate::guide::items#writing-a-document-back-replace).
///
/// ```no_run
/// use mongodb::bson::doc;
/// use seqid::{Document, Item};
/// # use serde::{Deserialize, Serialize};
///
/// #[derive(Serialize, Deserialize, Item)]
/// struct Line { #[seq_no] no: i64, sku: String, quantity: u32 }
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
/// let mut order = Order::sequence().find(&db, 7).await?.expect("stored");
/// order.lines[0].quantity += 1;
/// match order.replace(&db).await {
///     Ok(()) => {}
///     Err(error) => match error.kind() {
///         // An append landed since the read: read it again, apply the change, replace again.
///         seqid::error::ErrorKind::ItemsStale { .. } => {}
///         _ => return Err(error),
///     },
/// }
/// # Ok(()) }
/// ```
#[must_use = "a replace does nothing until it is awaited"]
pub struct Replace<'a, T: Model> {
    doc: &'a T,
    db: Route<'a>,
    call: Call<'a>,
    model: PhantomData<fn() -> T>,
}

impl<'a, T: Model> Replace<'a, T> {
    pub(crate) fn new(doc: &'a T, db: Route<'a>) -> Self {
        Replace {
            doc,
            db,
            call: Call::default(),
            model: PhantomData,
        }
    }

    session!(
        /// Runs the replace in `session`, and in its transaction if one is running: the
        /// read and the write are then the transaction's, and an error is the
        /// transaction's to retry or abort ([`ErrorKind::Driver`](crate::error::ErrorKind::Driver)).
        ///
        /// ```no_run
        /// # use seqid::{Document, Item};
        /// # #[derive(serde::Serialize, serde::Deserialize, Item)]
        /// # struct Line { #[seq_no] no: i64 }
        /// # #[derive(serde::Serialize, serde::Deserialize, Document)]
        /// # #[seq_id("order", collection = "orders")]
        /// # struct Order { #[serde(rename = "_id")] id: i64, #[seq_items(last = "lines_last")] lines: Vec<Line>, lines_last: i64 }
        /// # async fn run(db: mongodb::Database, mut session: mongodb::ClientSession, order: Order) -> Result<(), seqid::Error> {
        /// order.replace(&db).session(&mut session).await?;
        /// # Ok(()) }
        /// ```
    );
}

impl<'a, T: Model> std::future::IntoFuture for Replace<'a, T> {
    type Output = Result<(), Error>;
    type IntoFuture = BoxFuture<'a, Result<(), Error>>;

    fn into_future(self) -> Self::IntoFuture {
        let Replace { doc, db, call, .. } = self;
        Box::pin(async move { replace::replace(db, doc, call.session).await })
    }
}
