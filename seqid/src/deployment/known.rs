//! What a handle, or the process for calls through bare databases, keeps of the
//! deployments its calls go to: the kind of each database's deployment, how each collection
//! is sharded, and what was decided of each sequence on a sharded cluster; kept for
//! [`REREAD_AFTER`], and stale sooner once a command has answered that the routing
//! changed (`server::routing_changed`). The facts only: `deployment::facts` reads them
//! and keeps them here.
//!
//! A handle keeps them for its databases and collections; calls through a bare
//! `mongodb::Database`, which keep nothing, share the process's, by database and collection
//! name (a process that reaches two deployments with the same names through bare databases
//! shares them: a handle per deployment keeps them apart).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use mongodb::Database;

use crate::base::lock;
use crate::base::server::routing_epoch;
use crate::deployment::sharding::{Refusal, ShardKey};
use crate::schema::sequence::Sequence;

/// How long what was read of a deployment is kept.
pub(crate) const REREAD_AFTER: Duration = Duration::from_secs(300);

/// What kind of deployment a database lives on.
///
/// ```no_run
/// # async fn run(db: seqid::Database) -> Result<(), seqid::Error> {
/// let report = seqid::deployment::check(&db).await?;
/// if report.topology == seqid::deployment::Topology::Sharded {
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
    /// By database name: the deployment refused an update pipeline (nx-27017, a
    /// MongoDB-compatible service), so that appends of items go the conditional way from the
    /// first. Kept for the life of the handle (or the process): a server does not learn
    /// pipelines while it runs.
    no_pipelines: Mutex<HashSet<String>>,
}

/// A sequence in a database: the database's name, and the sequence whole (two sequences
/// of one name may differ in their counters collection or layout: one named at run time
/// beside a declared one, say).
type SequenceIn = (String, Sequence);

/// What was decided of a sequence on a sharded cluster: it holds, or why not.
type Decision = Result<(), Refusal>;

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
        if self.topology(db)? != Topology::Sharded {
            return Some(Ok(()));
        }
        let key = (db.name().to_owned(), *seq);
        lock(&self.0.decisions).get(&key).and_then(Read::fresh)
    }

    /// Keeps what was decided of `seq` in `db` on a sharded cluster.
    pub(crate) fn decide(
        &self,
        db: &Database,
        seq: &'static Sequence,
        decided: Result<(), Refusal>,
    ) {
        let key = (db.name().to_owned(), *seq);
        lock(&self.0.decisions).insert(key, Read::new(decided));
    }

    /// The kind of `db`'s deployment, if it was read lately.
    pub(crate) fn topology(&self, db: &Database) -> Option<Topology> {
        lock(&self.0.topologies)
            .get(db.name())
            .and_then(Read::fresh)
    }

    /// Keeps the kind of `db`'s deployment, as just read.
    pub(crate) fn keep_topology(&self, db: &Database, topology: Topology) {
        lock(&self.0.topologies).insert(db.name().to_owned(), Read::new(topology));
    }

    /// How the collection `namespace` (`db.coll`) is sharded, if it was read lately:
    /// `Some(None)` unsharded.
    pub(crate) fn shard_key(&self, namespace: &str) -> Option<Option<ShardKey>> {
        lock(&self.0.placements)
            .get(namespace)
            .and_then(Read::fresh)
    }

    /// Whether `db`'s deployment refused an update pipeline.
    pub(crate) fn refuses_pipelines(&self, db: &Database) -> bool {
        lock(&self.0.no_pipelines).contains(db.name())
    }

    /// Keeps that `db`'s deployment refuses update pipelines.
    pub(crate) fn keep_no_pipelines(&self, db: &Database) {
        lock(&self.0.no_pipelines).insert(db.name().to_owned());
    }

    /// Keeps how `namespace` is sharded, as just read.
    pub(crate) fn keep_shard_key(&self, namespace: String, key: Option<ShardKey>) {
        lock(&self.0.placements).insert(namespace, Read::new(key));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
