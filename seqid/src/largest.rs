//! The one query for the largest numeric `_id` of a collection: the optimistic loop's next
//! candidate, and the value `sync_counter` raises a counter to.

use mongodb::bson::{Bson, Document as BsonDocument, doc};
use mongodb::{ClientSession, Collection};

use crate::write::PRIMARY;
use crate::{Error, Sequence, numeric};

/// What is known of a collection's `_id`s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ids {
    /// Maybe only numbers: an unfiltered descending sort on `_id` reads one index entry
    /// and finds the maximum, unless non-numeric ids (which sort above numbers) exist.
    MaybeNumeric,
    /// Non-numeric ids were seen: only a query bounded to numbers finds the maximum.
    Mixed,
}

/// The largest numeric `_id`, or `None` if there is none, and what the query learned.
///
/// In `session`, the caller's transaction, when given.
///
/// With [`Ids::Mixed`], the query is bounded to numbers: `$lte: Infinity` is
/// type-bracketed, so MongoDB still reads one entry of the `_id` index.
pub(crate) async fn numeric_id(
    collection: &Collection<BsonDocument>,
    seq: &Sequence,
    ids: Ids,
    session: Option<&mut ClientSession>,
) -> Result<(Option<Bson>, Ids), Error> {
    query(collection, ids, session).await.map_err(|error| {
        Error::driver(
            seq.name,
            format!("finding the largest _id in `{}`", seq.collection),
            error,
        )
    })
}

async fn query(
    collection: &Collection<BsonDocument>,
    ids: Ids,
    mut session: Option<&mut ClientSession>,
) -> mongodb::error::Result<(Option<Bson>, Ids)> {
    if ids == Ids::MaybeNumeric {
        let top = top_id(collection, doc! {}, session.as_deref_mut()).await?;
        match top {
            None => return Ok((None, ids)),
            Some(id) if numeric::floor(&id).is_some() => return Ok((Some(id), ids)),
            Some(_) => {}
        }
    }
    let bounded = doc! { "_id": { "$lte": f64::INFINITY } };
    let top = top_id(collection, bounded, session).await?;
    Ok((top, Ids::Mixed))
}

/// The top `_id` matching `filter`; in `session` (the caller's transaction) if given,
/// which reads from the transaction's own primary and snapshot.
async fn top_id(
    collection: &Collection<BsonDocument>,
    filter: BsonDocument,
    session: Option<&mut ClientSession>,
) -> mongodb::error::Result<Option<Bson>> {
    let find = collection
        .find_one(filter)
        .sort(doc! { "_id": -1 })
        .projection(doc! { "_id": 1 });
    let top = match session {
        Some(session) => find.session(session).await?,
        None => find.selection_criteria(PRIMARY).await?,
    };
    Ok(top.and_then(|mut top| top.remove("_id")))
}
