//! [`FindById`]: a document by its number, in its scope for a scoped sequence.

use std::future::IntoFuture;

use serde::Serialize;
use serde::de::DeserializeOwned;

use std::marker::PhantomData;

use crate::future::BoxFuture;
use crate::indexes;
use crate::model::Model;
use crate::registry::Route;
use crate::scope::Named;
use crate::server::PRIMARY;
use crate::{Error, Sequence};

/// Finds a document by the number its sequence gave it, from [`Document::find_by_id`](crate::Document::find_by_id):
/// await it for the document, or `None`. Read from the primary; numbers compare by value,
/// so a document stored as Int32 by another tool is found by its `i64` number.
#[must_use = "a find does nothing until it is awaited"]
pub struct FindById<'a, T: Model> {
    db: Route<'a>,
    seq: &'static Sequence,
    id: i128,
    scope: Named,
    _type: PhantomData<fn() -> T>,
}

impl<'a, T: Model> FindById<'a, T> {
    pub(crate) fn new(db: Route<'a>, seq: &'static Sequence, id: impl Into<i128>) -> Self {
        FindById {
            db,
            seq,
            id: id.into(),
            scope: Named::default(),
            _type: PhantomData,
        }
    }

    /// The scope the number belongs to, for a scoped sequence: the value of its scope
    /// field, or a tuple of values in the declared order (numbers repeat across scopes).
    /// Required for a scoped sequence, refused for another ([`Error::InvalidScope`]).
    ///
    /// ```no_run
    /// # use seqid::Document;
    /// # #[derive(serde::Serialize, serde::Deserialize, Document)]
    /// # #[seq_id(collection = "tickets")]
    /// # struct Ticket { project: String, #[seq_id("ticket", scope = "project")] number: i64 }
    /// # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
    /// let ticket = Ticket::find_by_id(&db, 1041).scope("apollo").await?;
    /// # Ok(()) }
    /// ```
    pub fn scope(mut self, scope: impl Serialize) -> Self {
        self.scope = Named::new(scope);
        self
    }
}

impl<'a, T: Model + DeserializeOwned> IntoFuture for FindById<'a, T> {
    type Output = Result<Option<T>, Error>;
    type IntoFuture = BoxFuture<'a, Self::Output>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(async move {
            let seq = self.seq;
            let scope = self.scope.resolve(seq)?;
            let id = self.id;
            // A number beyond i64 cannot have come from a sequence: not stored.
            let Ok(id) = i64::try_from(id) else {
                return Ok(None);
            };
            self.db
                .db
                .collection::<T>(seq.collection)
                .find_one(indexes::at(seq, &scope, id))
                .selection_criteria(PRIMARY)
                .await
                .map_err(|error| {
                    Error::driver(
                        seq,
                        format!(
                            "finding {} {id}{} in `{}`",
                            seq.field,
                            scope.in_scope(),
                            seq.collection
                        ),
                        error,
                    )
                })
        })
    }
}
