//! The counter's administration: read it, set it, raise it to the ids stored, list every
//! counter of a sequence, and find the largest id stored in every scope of it.

use std::future::IntoFuture;

use mongodb::action::Action;
use mongodb::bson::{Bson, Document as BsonDocument, doc};
use mongodb::{Cursor, Database};

use super::Change;
use super::missing::ensure_unique_index;
use super::update::update;
use super::{Counter, UPSERT_ATTEMPTS, counter_write_concern, not_numeric, stored};
use crate::base::error::{Doing, Error};
use crate::base::numeric;
use crate::base::server::{DUPLICATE_KEY, PRIMARY, noted, server_code};
use crate::fields::scope::Scope;
use crate::optimistic::largest;
use crate::schema::layout::ScopeEncoding;
use crate::schema::sequence::Sequence;
use crate::state::allocator::Tally;

/// Raises the counter to the largest numeric id of its scope in the sequence's collection
/// (never lowers it), and returns its value.
pub(crate) async fn sync(db: &Database, counter: Counter<'_>, tally: &Tally) -> Result<i64, Error> {
    let seq = counter.seq;
    let collection = db.collection::<BsonDocument>(seq.collection);
    // No numeric id stored: the counter is raised to the one before `start`, at most.
    let largest = largest::stored_floor(&collection, seq, counter.scope)
        .await?
        .unwrap_or(i64::MIN);
    raise(db, counter, largest, tally).await
}

/// Raises the counter so that the next id it hands out is above `largest`, an id stored,
/// and never below the first id: a counter this creates starts where `start` says.
/// Returns the last id handed out, as the counter now says.
///
/// With a step, the counter is raised to the largest id of the sequence (`start + k ×
/// step`) not above `largest`: the next id is then above `largest` and still one of the
/// sequence's, so writers that interleave by step (odd and even ids) keep to their own.
pub(crate) async fn raise(
    db: &Database,
    counter: Counter<'_>,
    largest: i64,
    tally: &Tally,
) -> Result<i64, Error> {
    let floor = counter.last_at_most(largest)?;
    let value = counter.value_of(floor)?;
    let value = update(db, counter, Change::Max(value), tally, None).await?;
    counter.last_of(value)
}

/// The last id the counter has handed out, or `None` when there is no counter (or it
/// has no value).
pub(crate) async fn read(db: &Database, counter: Counter<'_>) -> Result<Option<i64>, Error> {
    let counters = db.collection::<BsonDocument>(counter.seq.counters);
    last_in(counter, stored(&counters, counter).await?.flatten())
}

/// The last id handed out when the counter holds `value` (`None`: it has no value).
pub(super) fn last_in(counter: Counter<'_>, value: Option<Bson>) -> Result<Option<i64>, Error> {
    let Some(value) = value else { return Ok(None) };
    match numeric::integral(&value) {
        Some(n) => counter.last_of(n).map(Some),
        None => Err(not_numeric(counter, value)),
    }
}

/// Every counter of `seq` (one per scope that has one), each with the last id it handed
/// out (`None`: a counter without a value, made by another tool), in the order of their
/// `_id`. A counter of a scope seqid cannot read back (another tool's, holding a value no
/// scope has) is passed over.
pub(crate) async fn every(
    db: &Database,
    seq: &'static Sequence,
) -> Result<Vec<(Scope, Option<i64>)>, Error> {
    let layout = &seq.layout;
    let scope = &Scope::NONE;
    let mut filter = Counter { seq, scope }.filter();
    match layout.scope {
        ScopeEncoding::InId if !seq.scope.is_empty() => {
            // Anchored, so that MongoDB reads the `_id` index from the prefix on.
            let prefix = regex_escaped(&Scope::counter_id_prefix(seq));
            filter = doc! { "_id": { "$regex": format!("^{prefix}") } };
        }
        ScopeEncoding::InField(key) => {
            filter.remove(key);
        }
        _ => {}
    }
    let collection = db.collection::<BsonDocument>(seq.counters);
    let find = collection
        .find(filter)
        .sort(doc! { "_id": 1 })
        .selection_criteria(PRIMARY);
    let listing = format!("listing the counters in `{}`", seq.counters);
    let stored = every_document(seq, listing, find).await?;
    let mut counters = Vec::with_capacity(stored.len());
    for document in stored {
        let scope = match layout.scope {
            ScopeEncoding::InId if !seq.scope.is_empty() => document
                .get_str("_id")
                .ok()
                .and_then(|id| Scope::of_counter_id(seq, id)),
            ScopeEncoding::InField(key) => {
                Scope::of_reference_value(seq, document.get(key).unwrap_or(&Bson::Null))
            }
            _ => Some(Scope::NONE),
        };
        let Some(scope) = scope else { continue };
        let counter = Counter { seq, scope: &scope };
        let last = last_in(counter, document.get(counter.value_key()).cloned())?;
        counters.push((scope, last));
    }
    Ok(counters)
}

/// The largest number stored in every scope of `seq` that has documents, floored to an
/// integer. Documents whose scope fields hold no scope value (see [`ErrorKind::InvalidScope`](crate::error::ErrorKind::InvalidScope))
/// belong to no scope and are passed over.
pub(crate) async fn largest_of_every_scope(
    db: &Database,
    seq: &'static Sequence,
) -> Result<Vec<(Scope, i64)>, Error> {
    // The scope values as `.scope(...)` takes them: the one value, or an array of them
    // in the declared order (a missing field is null in it).
    let group_key = match seq.scope {
        [field] => Bson::String(format!("${field}")),
        fields => fields
            .iter()
            .map(|field| Bson::String(format!("${field}")))
            .collect(),
    };
    let pipeline = [
        doc! { "$match": { seq.field: { "$type": "number" } } },
        doc! { "$group": { "_id": group_key, "top": { "$max": format!("${}", seq.field) } } },
    ];
    let collection = db.collection::<BsonDocument>(seq.collection);
    let aggregate = collection.aggregate(pipeline).selection_criteria(PRIMARY);
    let (field, name) = (seq.field, seq.collection);
    let finding = format!("finding the largest {field} of every scope in `{name}`");
    let groups = every_document(seq, finding, aggregate).await?;
    Ok(groups
        .iter()
        .filter_map(|group| {
            let scope = Scope::given(seq, Some(group.get("_id")?)).ok()?;
            Some((scope, group.get("top").and_then(numeric::floor)?))
        })
        .collect())
}

/// Every document of the cursor `query` opens, read to the end; a failure to open it or
/// to read it is [`ErrorKind::Driver`](crate::error::ErrorKind::Driver), the action named `action`.
async fn every_document(
    seq: &'static Sequence,
    action: String,
    query: impl IntoFuture<Output = mongodb::error::Result<Cursor<BsonDocument>>>,
) -> Result<Vec<BsonDocument>, Error> {
    use futures_util::TryStreamExt;
    let every = async { query.await?.try_collect().await };
    every.await.doing(seq, || action)
}

/// `text` with the characters a regular expression gives a meaning to escaped.
fn regex_escaped(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if "\\^$.|?*+()[]{}".contains(c) {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

/// Sets the counter so that `last` is the last id handed out (creating it if missing),
/// with the counter's write concern.
pub(crate) async fn set(db: &Database, counter: Counter<'_>, last: i64) -> Result<(), Error> {
    let seq = counter.seq;
    let counters = db.collection::<BsonDocument>(seq.counters);
    let value = counter.value_of(last)?;
    let what = || format!("setting the counter in `{}` to {last}", seq.counters);
    let failed = |error| Error::driver(seq, what(), noted(error));
    let by_id = counter.layout().by_id();
    // A counter found by fields is created by an insert (see the module's notes), and
    // updated if another writer creates it meanwhile.
    for _ in 0..UPSERT_ATTEMPTS {
        let set = doc! { "$set": { counter.value_key(): counter.written(value) } };
        let update = counters
            .update_one(counter.filter(), counter.creating(set))
            .upsert(by_id);
        let concern = counter_write_concern(seq, &counters);
        let update = update.optional(concern, |a, c| a.write_concern(c));
        let result = update.await.map_err(failed)?;
        if by_id || result.matched_count > 0 {
            return Ok(());
        }
        ensure_unique_index(&counters, counter).await?;
        let insert = counters.insert_one(counter.created(value));
        let concern = counter_write_concern(seq, &counters);
        match insert.optional(concern, |a, c| a.write_concern(c)).await {
            Ok(_) => return Ok(()),
            Err(error) if server_code(&error) == Some(DUPLICATE_KEY) => {}
            Err(error) => return Err(failed(error)),
        }
    }
    Err(counter.contended(UPSERT_ATTEMPTS))
}
