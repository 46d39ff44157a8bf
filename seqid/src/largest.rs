//! The one query for the largest numeric `_id` of a collection: the optimistic loop's next
//! candidate, and the value `sync_counter` raises a counter to.

use mongodb::Collection;
use mongodb::bson::{Bson, Document as BsonDocument, doc};

use crate::numeric;
use crate::write::PRIMARY;

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
/// With [`Ids::Mixed`], the query is bounded to numbers: `$lte: Infinity` is
/// type-bracketed, so MongoDB still reads one entry of the `_id` index.
pub(crate) async fn numeric_id(
    collection: &Collection<BsonDocument>,
    ids: Ids,
) -> mongodb::error::Result<(Option<Bson>, Ids)> {
    if ids == Ids::MaybeNumeric {
        let top = top_id(collection, doc! {}).await?;
        match top {
            None => return Ok((None, ids)),
            Some(id) if numeric::floor(&id).is_some() => return Ok((Some(id), ids)),
            Some(_) => {}
        }
    }
    let top = top_id(collection, doc! { "_id": { "$lte": f64::INFINITY } }).await?;
    Ok((top, Ids::Mixed))
}

async fn top_id(
    collection: &Collection<BsonDocument>,
    filter: BsonDocument,
) -> mongodb::error::Result<Option<Bson>> {
    let top = collection
        .find_one(filter)
        .sort(doc! { "_id": -1 })
        .projection(doc! { "_id": 1 })
        .selection_criteria(PRIMARY)
        .await?;
    Ok(top.and_then(|mut top| top.remove("_id")))
}
