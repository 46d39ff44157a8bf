//! [`FindById`]: a document by its number, in its scope for a scoped sequence.

use std::future::IntoFuture;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::Error;
use crate::future::BoxFuture;
use crate::indexes;
use crate::model::{IdValue, Model};
use crate::registry::Route;
use crate::scope::Named;
use crate::server::PRIMARY;

/// Finds a document by the number its sequence gave it, from [`Document::find_by_id`](crate::Document::find_by_id):
/// await it for the document, or `None`. Read from the primary; numbers compare by value,
/// so a document stored as Int32 by another tool is found by its `i64` number.
#[must_use = "a find does nothing until it is awaited"]
pub struct FindById<'a, T: Model> {
    db: Route<'a>,
    id: IdValue<T>,
    scope: Named,
}

impl<'a, T: Model> FindById<'a, T> {
    pub(crate) fn new(db: Route<'a>, id: IdValue<T>) -> Self {
        FindById {
            db,
            id,
            scope: Named::default(),
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
            let seq = &T::SEQUENCE;
            let scope = self.scope.resolve(seq)?;
            let id: i128 = self.id.into();
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
