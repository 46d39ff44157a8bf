//! The deployment a call goes to: a standalone server, a replica set, or a sharded cluster
//! (reached through mongos, whose `hello` answers `msg: "isdbgrid"`), and on a sharded
//! cluster how each collection a sequence writes is sharded (its `config.collections`
//! entry), kept by a handle or by the process. `crate::api::check` holds each call to what
//! [`crate::base::sharding`] decides of it.
//!
//! What is read is kept: by a handle, for its databases and collections; for calls
//! through a bare `mongodb::Database`, which keep nothing, by the process, by database
//! and collection name (a process that reaches two deployments with the same names
//! through bare databases shares it: a handle per deployment keeps them apart). Kept
//! for [`REREAD_AFTER`], and read again sooner once a command has answered that the
//! routing changed (a stale shard or database version, which every driver error seqid
//! reports passes by: `server::routing_changed`). One `hello` per database the first time;
//! on a replica set or a standalone server, nothing more, ever.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use mongodb::Database;
use mongodb::bson::{Bson, Document as BsonDocument, doc};

use crate::base::detach::Finishing;
use crate::base::error::Error;
use crate::base::sequence::{Sequence, Strategy};
use crate::base::server::routing_epoch;
use crate::base::sharding::ShardKey;

/// How long what was read of a deployment is kept.
pub(crate) const REREAD_AFTER: Duration = Duration::from_secs(300);

/// What kind of deployment a database lives on.
///
/// ```no_run
/// # async fn run(db: seqid::Database) -> Result<(), seqid::Error> {
/// let report = seqid::check_deployment(&db, []).await?;
/// if report.topology == seqid::Topology::Sharded {
///     println!("through mongos");
/// }
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Topology {
    /// One server, no replica set.
    Standalone,
    /// A replica set (its `hello` names the set).
    ReplicaSet,
    /// A sharded cluster, through mongos.
    Sharded,
}

/// What a handle (or the process, for bare databases) has read of its deployments.
/// Cheap to clone: a read whose caller was cancelled runs to its end in a task of its own
/// (see [`crate::base::detach`]), and keeps what it read.
#[derive(Clone, Default)]
pub(crate) struct Known(Arc<Reads>);

#[derive(Default)]
struct Reads {
    /// By database name.
    topologies: Mutex<HashMap<String, Read<Topology>>>,
    /// By namespace (`db.coll`): the shard key, `None` unsharded.
    placements: Mutex<HashMap<String, Read<Option<ShardKey>>>>,
    /// On a sharded cluster, by database and sequence: what was decided of it.
    decisions: Mutex<HashMap<SequenceIn, Read<Decision>>>,
}

/// A sequence in a database: the database's name, the sequence's name and collection.
type SequenceIn = (String, &'static str, &'static str);

/// What was decided of a sequence on a sharded cluster: it holds, or why not.
type Decision = Result<(), Refusal>;

/// Why a sequence is refused on a sharded cluster: what [`Error::Sharded`] says.
#[derive(Clone, Debug)]
pub(crate) struct Refusal {
    /// `db.coll`.
    pub collection: String,
    pub shard_key: String,
    pub why: String,
}

impl Refusal {
    pub(crate) fn error(self, seq: &'static Sequence) -> Error {
        Error::Sharded {
            sequence: seq,
            collection: self.collection.into(),
            shard_key: self.shard_key.into(),
            why: self.why.into(),
        }
    }
}

/// A value read, and when.
#[derive(Clone)]
struct Read<T> {
    value: T,
    at: Instant,
    epoch: u64,
}

impl<T: Clone> Read<T> {
    fn new(value: T) -> Read<T> {
        Read {
            value,
            at: Instant::now(),
            epoch: routing_epoch(),
        }
    }

    fn fresh(&self) -> Option<T> {
        let current = self.epoch == routing_epoch();
        (current && self.at.elapsed() < REREAD_AFTER).then(|| self.value.clone())
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Known {
    /// What bare databases' calls share: the process's.
    pub(crate) fn of_process() -> &'static Known {
        static KNOWN: OnceLock<Known> = OnceLock::new();
        KNOWN.get_or_init(Known::default)
    }

    /// What was decided of `seq` in `db`, if it can be told without a read: off a sharded
    /// cluster, that it holds; on one, the decision kept. No allocation when `db` is known
    /// not to be sharded.
    pub(crate) fn decided(
        &self,
        db: &Database,
        seq: &'static Sequence,
    ) -> Option<Result<(), Refusal>> {
        let topology = lock(&self.0.topologies)
            .get(db.name())
            .and_then(Read::fresh)?;
        if topology != Topology::Sharded {
            return Some(Ok(()));
        }
        let key = (db.name().to_owned(), seq.name, seq.collection);
        lock(&self.0.decisions).get(&key).and_then(Read::fresh)
    }

    /// Keeps what was decided of `seq` in `db` on a sharded cluster.
    pub(crate) fn decide(
        &self,
        db: &Database,
        seq: &'static Sequence,
        decided: Result<(), Refusal>,
    ) {
        let key = (db.name().to_owned(), seq.name, seq.collection);
        lock(&self.0.decisions).insert(key, Read::new(decided));
    }

    /// The deployment `db` lives on, read with `hello` unless known.
    pub(crate) async fn topology(
        &self,
        db: &Database,
        seq: &'static Sequence,
    ) -> Result<Topology, Error> {
        if let Some(known) = lock(&self.0.topologies)
            .get(db.name())
            .and_then(Read::fresh)
        {
            return Ok(known);
        }
        let (known, db) = (self.clone(), db.clone());
        Finishing::new(async move {
            let topology = read_topology(&db, seq).await?;
            lock(&known.0.topologies).insert(db.name().to_owned(), Read::new(topology));
            Ok(topology)
        })
        .await
    }

    /// The shard key of `collection` in `db` (`None`: unsharded), read from
    /// `config.collections` unless known.
    pub(crate) async fn shard_key(
        &self,
        db: &Database,
        collection: &str,
        seq: &'static Sequence,
    ) -> Result<Option<ShardKey>, Error> {
        let namespace = format!("{}.{collection}", db.name());
        if let Some(known) = lock(&self.0.placements)
            .get(&namespace)
            .and_then(Read::fresh)
        {
            return Ok(known);
        }
        let (known, db) = (self.clone(), db.clone());
        Finishing::new(async move {
            let key = read_shard_key(&db, &namespace, seq).await?;
            lock(&known.0.placements).insert(namespace, Read::new(key.clone()));
            Ok(key)
        })
        .await
    }
}

/// The shard keys of `seq`'s collection and of its counters collection (not read for
/// the optimistic strategy, which has no counter).
pub(crate) async fn shard_keys(
    known: &Known,
    db: &Database,
    seq: &'static Sequence,
) -> Result<(Option<ShardKey>, Option<ShardKey>), Error> {
    let target = known.shard_key(db, seq.collection, seq).await?;
    let counters = match seq.strategy {
        Strategy::Optimistic { .. } => None,
        _ => known.shard_key(db, seq.counters, seq).await?,
    };
    Ok((target, counters))
}

/// What `db`'s deployment answers to `hello`.
pub(crate) async fn read_topology(
    db: &Database,
    seq: &'static Sequence,
) -> Result<Topology, Error> {
    let hello = db
        .run_command(doc! { "hello": 1 })
        .await
        .map_err(|error| Error::driver(seq, "asking the deployment what it is (`hello`)", error))?;
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
    let collections = db
        .client()
        .database("config")
        .collection::<BsonDocument>("collections");
    let entry = collections
        .find_one(doc! { "_id": namespace })
        .await
        .map_err(|error| {
            Error::driver(
                seq,
                format!("reading how `{namespace}` is sharded (`config.collections`)"),
                error,
            )
        })?;
    Ok(entry.as_ref().and_then(shard_key_of))
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

    #[test]
    fn a_routing_change_makes_what_was_read_stale() {
        let read = Read::new(Topology::Sharded);
        assert_eq!(read.fresh(), Some(Topology::Sharded));
        crate::base::server::routing_changed(Some(11000));
        assert_eq!(
            read.fresh(),
            Some(Topology::Sharded),
            "not a routing change"
        );
        crate::base::server::routing_changed(Some(13388));
        assert_eq!(read.fresh(), None);
    }
}
