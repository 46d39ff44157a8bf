//! The reads of the deployment a call goes to: what kind it is, a standalone server, a
//! replica set, or a sharded cluster (reached through mongos, whose `hello` answers `msg:
//! "isdbgrid"`), and on a sharded cluster how each collection a sequence writes is sharded
//! (its `config.collections` entry). What is read is kept ([`Known`]): one `hello` per
//! database the first time; on a replica set or a standalone server, nothing more, ever.
//! [`crate::deployment::gate`] holds every call to what [`crate::deployment::sharding`] decides of
//! its sequence there.

use mongodb::bson::{Bson, Document as BsonDocument, doc};
use mongodb::{Collection, Database, IndexModel};

use crate::base::detach::Finishing;
use crate::base::error::{Doing, Error};
use crate::base::server::server_code;
use crate::deployment::known::{Known, Topology};
use crate::deployment::sharding::ShardKey;
use crate::schema::sequence::{Sequence, Strategy};

/// The kind of `db`'s deployment, read with `hello` unless `known` keeps it.
pub(crate) async fn topology(
    known: &Known,
    db: &Database,
    seq: &'static Sequence,
) -> Result<Topology, Error> {
    if let Some(topology) = known.topology(db) {
        return Ok(topology);
    }
    let (known, db) = (known.clone(), db.clone());
    Finishing::new(async move {
        let topology = read_topology(&db, seq).await?;
        known.keep_topology(&db, topology);
        Ok(topology)
    })
    .await
}

/// The shard key of `collection` in `db` (`None`: unsharded), read from
/// `config.collections` unless `known` keeps it.
pub(crate) async fn shard_key(
    known: &Known,
    db: &Database,
    collection: &str,
    seq: &'static Sequence,
) -> Result<Option<ShardKey>, Error> {
    let namespace = format!("{}.{collection}", db.name());
    if let Some(key) = known.shard_key(&namespace) {
        return Ok(key);
    }
    let (known, db) = (known.clone(), db.clone());
    Finishing::new(async move {
        let key = read_shard_key(&db, &namespace, seq).await?;
        known.keep_shard_key(namespace, key.clone());
        Ok(key)
    })
    .await
}

/// The shard keys of `seq`'s collection and of its counters collection (not read for
/// the optimistic strategy, which has no counter). A sequence named at run time with no
/// collection (a number on its own) writes its counters collection alone: no target.
pub(crate) async fn shard_keys(
    known: &Known,
    db: &Database,
    seq: &'static Sequence,
) -> Result<(Option<ShardKey>, Option<ShardKey>), Error> {
    let target = match seq.collection {
        "" => None,
        collection => shard_key(known, db, collection, seq).await?,
    };
    let counters = match seq.strategy {
        Strategy::Optimistic { .. } => None,
        _ => shard_key(known, db, seq.counters, seq).await?,
    };
    Ok((target, counters))
}

/// What `db`'s deployment answers to `hello`.
pub(crate) async fn read_topology(
    db: &Database,
    seq: impl Into<Option<&'static Sequence>>,
) -> Result<Topology, Error> {
    let hello = db.run_command(doc! { "hello": 1 }).await;
    let hello = hello.doing(seq, || "asking the deployment what it is (`hello`)")?;
    Ok(topology_of(&hello))
}

/// The deployment a `hello` answer describes.
fn topology_of(hello: &BsonDocument) -> Topology {
    if hello.get_str("msg") == Ok("isdbgrid") {
        Topology::Sharded
    } else if hello.contains_key("setName") {
        Topology::ReplicaSet
    } else {
        Topology::Standalone
    }
}

/// The shard key `config.collections` holds for `namespace`: `None` if it holds none (an
/// unsharded collection), or marks it unsplittable or dropped (MongoDB 8 tracks some
/// unsharded collections there too).
async fn read_shard_key(
    db: &Database,
    namespace: &str,
    seq: &'static Sequence,
) -> Result<Option<ShardKey>, Error> {
    let config = db.client().database("config");
    let collections = config.collection::<BsonDocument>("collections");
    let found = collections.find_one(doc! { "_id": namespace }).await;
    let what = || format!("reading how `{namespace}` is sharded (`config.collections`)");
    Ok(found.doing(seq, what)?.as_ref().and_then(shard_key_of))
}

/// The shard key of a `config.collections` entry, if it shards the collection.
fn shard_key_of(entry: &BsonDocument) -> Option<ShardKey> {
    let flag = |name| matches!(entry.get(name), Some(Bson::Boolean(true)));
    if flag("dropped") || flag("unsplittable") {
        return None;
    }
    let key = entry.get_document("key").ok()?.clone();
    Some(ShardKey {
        key,
        unique: flag("unique"),
    })
}

/// Whether `collection` has a unique index, not partial, on exactly `keys` in that order
/// (whatever its name): what the [report](crate::deployment::DeploymentReport) says of it.
pub(crate) async fn has_unique(
    collection: &Collection<BsonDocument>,
    seq: &'static Sequence,
    keys: &[&str],
) -> Result<bool, Error> {
    has_unique_where(collection, seq, |fields| fields == keys).await
}

/// Whether a unique index, not partial, whose fields (in order) `wanted` accepts exists
/// (whatever its name). A collection that does not exist has none.
pub(crate) async fn has_unique_where(
    collection: &Collection<BsonDocument>,
    seq: &'static Sequence,
    wanted: impl Fn(&[&str]) -> bool,
) -> Result<bool, Error> {
    use futures_util::TryStreamExt;
    const NAMESPACE_NOT_FOUND: i32 = 26;
    let listed = async { collection.list_indexes().await?.try_collect().await };
    let indexes: Vec<IndexModel> = match listed.await {
        Err(error) if server_code(&error) == Some(NAMESPACE_NOT_FOUND) => return Ok(false),
        listed => listed.doing(seq, || {
            format!("listing the indexes of `{}`", seq.collection)
        })?,
    };
    // Any direction makes the same uniqueness; a partial index does not cover every
    // document.
    Ok(indexes.iter().any(|index| {
        let options = index.options.as_ref();
        let unique = options.and_then(|o| o.unique).unwrap_or(false);
        let partial = options.is_some_and(|o| o.partial_filter_expression.is_some());
        let fields: Vec<&str> = index.keys.keys().map(String::as_str).collect();
        unique && !partial && wanted(&fields)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hello_says_the_topology() {
        assert_eq!(
            topology_of(&doc! { "ismaster": true, "msg": "isdbgrid" }),
            Topology::Sharded
        );
        assert_eq!(
            topology_of(&doc! { "isWritablePrimary": true, "setName": "rs0" }),
            Topology::ReplicaSet
        );
        assert_eq!(
            topology_of(&doc! { "isWritablePrimary": true }),
            Topology::Standalone
        );
    }

    #[test]
    fn a_config_entry_shards_unless_unsplittable_or_dropped() {
        let entry = doc! { "_id": "app.users", "key": { "_id": "hashed" }, "unique": false };
        assert_eq!(
            shard_key_of(&entry),
            Some(ShardKey {
                key: doc! { "_id": "hashed" },
                unique: false
            })
        );
        let unique = doc! { "_id": "app.users", "key": { "email": 1 }, "unique": true };
        assert!(shard_key_of(&unique).is_some_and(|key| key.unique));
        for unsharded in [
            doc! { "_id": "app.users", "key": { "_id": 1 }, "unsplittable": true },
            doc! { "_id": "app.users", "key": { "_id": 1 }, "dropped": true },
            doc! { "_id": "app.users" },
        ] {
            assert_eq!(shard_key_of(&unsharded), None, "{unsharded}");
        }
    }
}
