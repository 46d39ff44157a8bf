//! The unique index a sequence on a field other than `_id` relies on: on its scope fields
//! and the field, in that order. `_id` has its own, always.
//!
//! The counters and block strategies hand each number out once, so they need no index
//! to stay unique; the optimistic strategy does (without it, two writers taking the same
//! largest + 1 would both be stored), and so does sending a document again
//! (`resume_insert`), which relies on the index to refuse a second copy.

use mongodb::IndexModel;
use mongodb::bson::{Document as BsonDocument, doc};
use mongodb::options::IndexOptions;

use crate::base::detach::Finishing;
use crate::base::error::{Doing, Error, ErrorKind};
use crate::base::server::{identity_index, identity_keys as keys, unique_index};
use crate::call::registry::Route;
use crate::deployment::facts::has_unique_where;
use crate::fields::natural::NaturalKey;
use crate::fields::scope::Scope;
use crate::schema::display::DisplayCode;
use crate::schema::model::Model;
use crate::schema::sequence::Sequence;

/// What relies on the index, for [`ErrorKind::MissingIndex`].
pub(crate) const OPTIMISTIC: &str =
    "the optimistic strategy relies on to refuse a number another writer took";
pub(crate) const RESUME: &str =
    "resume_insert relies on to refuse a second copy of a document sent again";
/// What relies on a natural key's index, for [`ErrorKind::MissingIndex`].
pub(crate) const NATURAL: &str = "find_or_insert relies on to store one document per natural \
     key (without it, two callers of one new key would both insert, each with its own id)";

/// Creates the indexes the sequence relies on, if missing, and returns their names; for
/// a sequence numbered `later` (`later`: every sequence of its type is), partial on the
/// documents that hold a number: drafts hold none, and are not duplicates of one another.
pub(crate) async fn create_numbering(
    route: Route<'_>,
    seq: &'static Sequence,
    later: bool,
) -> Result<Vec<String>, Error> {
    let name = identity_index(seq);
    if seq.field == "_id" {
        return Ok(vec![name]);
    }
    let model = match later {
        false => unique_index(keys(seq), &name),
        true => partial_unique(keys(seq), &name, doc! { seq.field: { "$type": "number" } }),
    };
    let name = make(route, seq, model, name, keys(seq)).await?;
    if let Some(registry) = route.registry {
        registry.found_index(route.db.name(), seq);
    }
    Ok(vec![name])
}

/// [`create`] for every sequence of `T` (its primary and [`Model::OTHERS`]), one after the
/// other, with each index named once; then [`create_for_code`] for every display field.
pub(crate) async fn create_all<T: Model>(route: Route<'_>) -> Result<Vec<String>, Error> {
    let mut names = create_numbering(route, &T::SEQUENCE, T::NUMBERED_LATER).await?;
    // Every sequence of a type numbered later is numbered later (the derive's rule).
    for seq in T::OTHERS {
        for name in create_numbering(route, seq, T::NUMBERED_LATER).await? {
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    for display in T::DISPLAYS {
        names.push(create_for_code(route, display, T::NUMBERED_LATER).await?);
    }
    if !T::NATURAL_KEY.is_empty() {
        names.push(create_for_key(route, &T::SEQUENCE, NaturalKey::declared::<T>()).await?);
    }
    Ok(names)
}

/// Creates the unique index on a natural key, if missing, and returns its name
/// (MongoDB's default, `tenant_1_email_1`): what `find_or_insert` relies on to store
/// one document per key.
async fn create_for_key(
    route: Route<'_>,
    seq: &'static Sequence,
    key: NaturalKey,
) -> Result<String, Error> {
    let (keys, name) = key.index();
    let model = unique_index(keys, &name);
    let on = format!("the natural key {}", key.shown());
    let name = make(route, seq, model, name, on).await?;
    if let Some(registry) = route.registry {
        registry.found_key_index(route.db.name(), seq.collection, key.fields);
    }
    Ok(name)
}

/// Makes sure a unique index keeps one document per value of the natural `key` (once
/// per handle; on every call through a bare database): a unique index, not partial, on
/// some of the key's fields in any order (an index unique on fewer fields keeps the
/// whole key unique too).
pub(crate) async fn require_key(
    route: Route<'_>,
    seq: &'static Sequence,
    key: NaturalKey,
) -> Result<(), Error> {
    let db = route.db.name();
    if let Some(registry) = route.registry
        && registry.key_index_found(db, seq.collection, key.fields)
    {
        return Ok(());
    }
    let covers = move |fields: &[&str]| {
        !fields.is_empty() && fields.iter().all(|field| key.fields.contains(field))
    };
    check(route, seq, key.index().0, NATURAL, covers).await?;
    if let Some(registry) = route.registry {
        registry.found_key_index(db, seq.collection, key.fields);
    }
    Ok(())
}

/// Creates the unique index on a display field, if missing, and returns its name
/// (MongoDB's default, `code_1`): the database's own guarantee that no two documents
/// hold one code, beside the derive's proof that no two numbers write one. Partial, on
/// strings only: documents stored before the field existed hold none, and are not
/// duplicates of one another (for a sequence numbered `later`, on the codes written: a
/// draft's is empty).
async fn create_for_code(
    route: Route<'_>,
    display: &'static DisplayCode,
    later: bool,
) -> Result<String, Error> {
    let seq = display.sequence;
    let name = format!("{}_1", display.field);
    // A draft of a sequence numbered later holds an empty code until it is numbered.
    let filter = match later {
        false => doc! { display.field: { "$type": "string" } },
        true => doc! { display.field: { "$gt": "" } },
    };
    let model = partial_unique(doc! { display.field: 1 }, &name, filter);
    let on = format!("the display field `{}`", display.field);
    make(route, seq, model, name, on).await
}

/// Creates `model`, the unique index `name` on `on`, in the sequence's collection if
/// missing, and returns `name`.
async fn make(
    route: Route<'_>,
    seq: &'static Sequence,
    model: IndexModel,
    name: String,
    on: impl std::fmt::Display,
) -> Result<String, Error> {
    let collection = route.db.collection::<BsonDocument>(seq.collection);
    let into = seq.collection;
    collection.create_index(model).await.doing(seq, || {
        format!("creating the unique index {name} on {on} in `{into}`")
    })?;
    Ok(name)
}

/// Makes sure the unique index the sequence relies on exists (once per handle; on every
/// call through a bare database), for what `why` says relies on it.
pub(crate) async fn require(
    route: Route<'_>,
    seq: &'static Sequence,
    why: &'static str,
) -> Result<(), Error> {
    if seq.field == "_id" {
        return Ok(());
    }
    if let Some(registry) = route.registry
        && registry.index_found(route.db.name(), seq)
    {
        return Ok(());
    }
    let wanted: Vec<&str> = seq.scope.iter().chain([&seq.field]).copied().collect();
    check(route, seq, keys(seq), why, move |fields| fields == wanted).await?;
    if let Some(registry) = route.registry {
        registry.found_index(route.db.name(), seq);
    }
    Ok(())
}

/// Makes sure a unique index, not partial, whose fields `wanted` accepts exists in the
/// sequence's collection: else [`ErrorKind::MissingIndex`] on `keys`, for what `why` says.
async fn check(
    route: Route<'_>,
    seq: &'static Sequence,
    keys: BsonDocument,
    why: &'static str,
    wanted: impl Fn(&[&str]) -> bool + Send + 'static,
) -> Result<(), Error> {
    // Finishing, so that a cancelled insert never drops the listing half-way (see
    // `crate::base::detach`).
    let collection = route.db.collection::<BsonDocument>(seq.collection);
    if Finishing::new(async move { has_unique_where(&collection, seq, wanted).await }).await? {
        return Ok(());
    }
    Err(Error::new(
        seq,
        ErrorKind::MissingIndex {
            keys: keys.to_string().into(),
            why,
        },
    ))
}

/// A unique index named `name` on `keys`, of the documents matching `filter` alone.
fn partial_unique(keys: BsonDocument, name: &str, filter: BsonDocument) -> IndexModel {
    let options = IndexOptions::builder()
        .unique(true)
        .name(name.to_owned())
        .partial_filter_expression(filter)
        .build();
    IndexModel::builder().keys(keys).options(options).build()
}

/// The filter for the document at `number` in `scope` (`{}` when unscoped): what
/// `find_by_id` and the lookups after an unknown outcome ask for.
pub(crate) fn at(seq: &Sequence, scope: &Scope, number: i64) -> BsonDocument {
    let mut filter = scope.filter();
    filter.insert(seq.field, number);
    filter
}
