//! The one query for the largest numeric value of a sequence's field (in a scope): the
//! optimistic loop's next candidate, the value `sync_counter` raises a counter to, the
//! largest stored `set_counter` and `list_counters` speak of, and the number of the sequence
//! a counter about to be made must not find stored.

use mongodb::bson::{Bson, Document as BsonDocument, doc};
use mongodb::{ClientSession, Collection};

use crate::base::error::{Doing, Error};
use crate::base::numeric;
use crate::base::server::PRIMARY;
use crate::fields::scope::Scope;
use crate::optimistic::frontier::{Ids, Maximum, MaximumRead};
use crate::schema::sequence::Sequence;

/// The maximum query the optimistic frontier reserves candidates above.
impl Maximum for Collection<BsonDocument> {
    fn largest(
        &self,
        read: MaximumRead<'_>,
        ids: Ids,
    ) -> impl std::future::Future<Output = Result<(Option<Bson>, Ids), Error>> + Send {
        numeric_id(self, read, ids)
    }
}

/// The largest numeric value of the sequence's field among the documents of the scope
/// `read` names, or `None` if there is none, and what the query learned. With an `above`,
/// only values above it are asked for (`None`: there is none above it); with a session,
/// in the caller's transaction.
///
/// With [`Ids::Mixed`], or `above`, the query is bounded to numbers: `$lte: Infinity` and
/// `$gt: above` are type-bracketed, so MongoDB still reads one entry of the index on the
/// field (`_id`'s, or the one on the scope fields and the field). `above` is what the
/// optimistic loop passes after another writer took an id: however the server sorts
/// (nx-27017 sorts an unfiltered `_id` as text) and whatever a lagging read answers, the
/// next candidate then comes from the ids above the one taken, not one id higher per
/// attempt.
pub(crate) async fn numeric_id(
    collection: &Collection<BsonDocument>,
    read: MaximumRead<'_>,
    ids: Ids,
) -> Result<(Option<Bson>, Ids), Error> {
    let (seq, scope) = (read.seq, read.scope);
    let found = query(collection, read, ids).await;
    let (field, name, within) = (seq.field, seq.collection, || scope.in_scope());
    let what = || format!("finding the largest {field} in `{name}`{}", within());
    found.doing(seq, what)
}

/// The largest numeric value of `seq.field` in `scope`, floored to an integer, or `None`
/// if there is none: what the counter's administration compares with.
pub(crate) async fn stored_floor(
    collection: &Collection<BsonDocument>,
    seq: &'static Sequence,
    scope: &Scope,
) -> Result<Option<i64>, Error> {
    let read = MaximumRead {
        seq,
        scope,
        above: None,
        session: None,
    };
    let (top, _) = numeric_id(collection, read, Ids::Mixed).await?;
    Ok(top.as_ref().and_then(numeric::floor))
}

/// The largest number of the sequence itself stored in `scope`: at or above its `start`,
/// and with a step one of `start + k × step` (two sequences with a step may share a field,
/// odd and even), or `None`.
pub(crate) async fn of_sequence(
    collection: &Collection<BsonDocument>,
    seq: &'static Sequence,
    scope: &Scope,
) -> Result<Option<Bson>, Error> {
    let step = seq.layout.step;
    let mut numbers = doc! { "$gte": seq.start, "$lte": f64::INFINITY };
    if step > 1 {
        numbers.insert("$mod", vec![step, seq.start.rem_euclid(step)]);
    }
    let mut filter = scope.filter();
    filter.insert(seq.field, numbers);
    let found = top_id(collection, seq.field, filter, None).await;
    let (field, name) = (seq.field, seq.collection);
    found.doing(seq, || {
        format!(
            "finding the largest number of the sequence in {field} of `{name}`{}",
            scope.in_scope()
        )
    })
}

async fn query(
    collection: &Collection<BsonDocument>,
    read: MaximumRead<'_>,
    ids: Ids,
) -> mongodb::error::Result<(Option<Bson>, Ids)> {
    let (field, scope, mut session) = (read.seq.field, read.scope, read.session);
    if let Some(above) = read.above {
        let mut bounded = scope.filter();
        bounded.insert(field, doc! { "$gt": above });
        let top = top_id(collection, field, bounded, session).await?;
        return Ok((top, ids));
    }
    if ids == Ids::MaybeNumeric {
        let top = top_id(collection, field, scope.filter(), session.as_deref_mut()).await?;
        match top {
            None => return Ok((None, ids)),
            Some(id) if numeric::floor(&id).is_some() => return Ok((Some(id), ids)),
            Some(_) => {}
        }
    }
    let mut bounded = scope.filter();
    bounded.insert(field, doc! { "$lte": f64::INFINITY });
    let top = top_id(collection, field, bounded, session).await?;
    Ok((top, Ids::Mixed))
}

/// The top value of `field` among the documents matching `filter`; in `session` (the
/// caller's transaction) if given, which reads from the transaction's own primary and
/// snapshot.
async fn top_id(
    collection: &Collection<BsonDocument>,
    field: &str,
    filter: BsonDocument,
    session: Option<&mut ClientSession>,
) -> mongodb::error::Result<Option<Bson>> {
    let find = collection
        .find_one(filter)
        .sort(doc! { field: -1 })
        .projection(doc! { field: 1 });
    let top = match session {
        Some(session) => find.session(session).await?,
        None => find.selection_criteria(PRIMARY).await?,
    };
    Ok(top.and_then(|mut top| top.remove(field)))
}
