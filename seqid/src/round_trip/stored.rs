//! Reads of stored documents by a filter, for the calls that look before they write
//! (`find_or_insert`, `number_draft`): on the primary, in the caller's session (and its
//! transaction's snapshot, where a read preference is refused), each document as stored and
//! as the model.

use mongodb::action::Action;
use mongodb::bson::Document as BsonDocument;
use serde::de::DeserializeOwned;

use crate::base::error::Error;
use crate::base::server::{PRIMARY, noted};
use crate::call::context::Context;
use crate::schema::sequence::Sequence;

/// A document read back: as the model, and as stored (what its fields compare by).
pub(crate) struct Stored<T> {
    pub doc: T,
    pub stored: BsonDocument,
}

impl<T: DeserializeOwned> Stored<T> {
    fn of(stored: BsonDocument) -> Result<Self, mongodb::error::Error> {
        let doc = mongodb::bson::from_document(stored.clone())?;
        Ok(Stored { doc, stored })
    }

    /// A new value of the model, as stored.
    pub(crate) fn copy(&self) -> Result<T, mongodb::error::Error> {
        Ok(mongodb::bson::from_document(self.stored.clone())?)
    }
}

/// Where [`one`] reads.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Within {
    /// The caller's session, and its transaction if one runs.
    Session,
    /// Neither.
    Nothing,
}

/// The document `filter` finds, if any, read `within` the caller's session or outside it
/// (what a call learns before its first read in its transaction); `what` names the read
/// in an error.
pub(crate) async fn one<T: DeserializeOwned>(
    filter: &BsonDocument,
    what: &str,
    cx: &mut Context<'_>,
    within: Within,
) -> Result<Option<Stored<T>>, Error> {
    let failed = failed(cx.seq, what, filter);
    let collection = cx.collection::<BsonDocument>();
    let find = collection.find_one(filter.clone());
    let in_transaction = within == Within::Session && cx.session.in_transaction();
    let session = cx.session.join().filter(|_| within == Within::Session);
    let primary = (!in_transaction).then_some(PRIMARY);
    let found = find
        .optional(session, |a, s| a.session(s))
        .optional(primary, |a, p| a.selection_criteria(p))
        .await;
    if in_transaction {
        // Answered, error or not: the driver now knows the transaction has begun.
        cx.session.mark_answered();
    }
    let found = found.map_err(failed)?;
    found.map(Stored::of).transpose().map_err(failed)
}

/// The documents `filter` finds, in `order` if given, at most `limit` of them if given;
/// `what` names the read in an error.
pub(crate) async fn all<T: DeserializeOwned>(
    filter: BsonDocument,
    order: Option<BsonDocument>,
    limit: Option<i64>,
    what: &str,
    cx: &mut Context<'_>,
) -> Result<Vec<Stored<T>>, Error> {
    let shown = filter.to_string();
    let failed = failed(cx.seq, what, &shown);
    let collection = cx.collection::<BsonDocument>();
    let find = collection
        .find(filter)
        .optional(order, |find, order| find.sort(order))
        .optional(limit, |find, limit| find.limit(limit));
    let in_transaction = cx.session.in_transaction();
    let stored: Vec<BsonDocument> = match cx.session.join() {
        Some(session) => {
            let primary = (!in_transaction).then_some(PRIMARY);
            let find = find.session(&mut *session);
            let find = find.optional(primary, |a, p| a.selection_criteria(p));
            let mut cursor = find.await.map_err(failed)?;
            let mut stored = Vec::new();
            while cursor.advance(session).await.map_err(failed)? {
                stored.push(cursor.deserialize_current().map_err(failed)?);
            }
            stored
        }
        None => {
            use futures_util::TryStreamExt;
            let cursor = find.selection_criteria(PRIMARY).await.map_err(failed)?;
            cursor.try_collect().await.map_err(failed)?
        }
    };
    if in_transaction {
        cx.session.mark_answered();
    }
    stored
        .into_iter()
        .map(|stored| Stored::of(stored).map_err(failed))
        .collect()
}

/// How many documents `filter` finds, in the caller's session; `what` names the count in
/// an error.
pub(crate) async fn count(
    filter: &BsonDocument,
    what: &str,
    cx: &mut Context<'_>,
) -> Result<u64, Error> {
    let collection = cx.collection::<BsonDocument>();
    let count = collection.count_documents(filter.clone());
    let in_transaction = cx.session.in_transaction();
    let counted = match cx.session.join() {
        Some(session) if in_transaction => count.session(session).await,
        Some(session) => count.session(session).selection_criteria(PRIMARY).await,
        None => count.selection_criteria(PRIMARY).await,
    };
    if in_transaction {
        cx.session.mark_answered();
    }
    counted.map_err(failed(cx.seq, what, filter))
}

/// The error of the read `what` of `filter` in the sequence's collection, from the
/// driver's.
fn failed<'a>(
    seq: &'static Sequence,
    what: &'a str,
    filter: &'a (impl std::fmt::Display + ?Sized),
) -> impl Fn(mongodb::error::Error) -> Error + Copy + 'a {
    let into = seq.collection;
    move |error| Error::driver(seq, format!("{what} {filter} in `{into}`"), noted(error))
}
