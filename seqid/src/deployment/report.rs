//! The report of [`check`]: what seqid finds of the deployment and of each collection the
//! sequences write, and each sequence's verdict, from what [`crate::deployment::sharding`]
//! decides (as the gate does for every call).

use std::fmt;
use std::future::{Future, IntoFuture};
use std::pin::Pin;

use mongodb::Database;
use mongodb::bson::Document as BsonDocument;
use serde::Serialize;

use crate::base::error::Error;
use crate::base::server::{counter_index, identity_index, identity_keys};
use crate::deployment::facts::{has_unique, read_topology, shard_keys};
use crate::deployment::known::Known;
use crate::deployment::known::Topology;
use crate::deployment::sharding::{Finding, ShardKey, assess};
use crate::schema::model::Model;
use crate::schema::sequence::{Sequence, Strategy};

/// What [`check`] found: the deployment, each collection the sequences write,
/// and each sequence's verdict. `Display` prints it for a person; `Serialize` for a
/// health endpoint.
///
/// ```no_run
/// # use seqid::Document;
/// # #[derive(serde::Serialize, Document)]
/// # #[seq_id("user")]
/// # struct User { #[serde(rename = "_id")] id: i64 }
/// # async fn run(db: seqid::Database) -> Result<(), seqid::Error> {
/// let report = seqid::deployment::check(&db).of::<User>().await?;
/// println!("{report}");
/// assert!(report.holds(), "a promise would not hold");
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct DeploymentReport {
    /// What the deployment is.
    pub topology: Topology,
    /// Each collection the sequences write, once.
    pub collections: Vec<CollectionReport>,
    /// Each sequence, and what holds of its promises.
    pub sequences: Vec<SequenceReport>,
}

/// A collection a sequence writes (its documents, or its counters).
///
/// ```no_run
/// # async fn run(db: seqid::Database, report: seqid::deployment::DeploymentReport) {
/// for collection in &report.collections {
///     println!("{}: {:?}", collection.namespace, collection.shard_key);
/// }
/// # }
/// ```
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct CollectionReport {
    /// `db.coll`.
    pub namespace: String,
    /// Its shard key, as `config.collections` holds it; `None` unsharded (and always
    /// off a sharded cluster).
    pub shard_key: Option<BsonDocument>,
    /// Whether the shard key was declared unique.
    pub unique_shard_key: bool,
    /// The unique indexes seqid relies on here, and whether each exists.
    pub indexes: Vec<IndexReport>,
}

/// A unique index a sequence relies on.
///
/// ```no_run
/// # fn run(index: seqid::deployment::IndexReport) {
/// if !index.exists {
///     eprintln!("missing {} ({})", index.name, index.relied_on_for);
/// }
/// # }
/// ```
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct IndexReport {
    /// Its name, as seqid makes it (`project_1_number_1`, `_id_`).
    pub name: String,
    /// Its keys.
    pub keys: BsonDocument,
    /// Whether the collection has it.
    pub exists: bool,
    /// What relies on it.
    pub relied_on_for: &'static str,
}

/// One sequence's verdict.
///
/// ```no_run
/// # fn run(sequence: seqid::deployment::SequenceReport) {
/// if sequence.verdict == seqid::deployment::Verdict::Refused {
///     for note in &sequence.notes {
///         eprintln!("{}: {}", note.namespace, note.text);
///     }
/// }
/// # }
/// ```
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct SequenceReport {
    /// The sequence's name.
    pub sequence: &'static str,
    /// Its strategy, as the attribute names it.
    pub strategy: &'static str,
    /// The worst of its notes: every promise holds, some at a cost, or one would not and
    /// its inserts are refused.
    pub verdict: Verdict,
    /// What was found, one note per promise that does not simply hold.
    pub notes: Vec<Note>,
}

/// What holds of a sequence's promises on the deployment.
///
/// ```no_run
/// # fn run(report: seqid::deployment::DeploymentReport) {
/// let refused = report.sequences.iter().filter(|s| s.verdict == seqid::deployment::Verdict::Refused);
/// # }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Every promise holds, as on a replica set.
    Holds,
    /// Every promise holds, some at a cost (the notes say which).
    HoldsAtACost,
    /// A promise would not hold: seqid refuses the sequence's inserts
    /// ([`ErrorKind::Sharded`](crate::error::ErrorKind::Sharded)).
    Refused,
}

/// A promise that holds at a cost, or would not hold, on one collection.
///
/// ```no_run
/// # fn run(note: seqid::deployment::Note) {
/// println!("{} ({}): {}", note.namespace, note.shard_key, note.text);
/// # }
/// ```
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct Note {
    /// Refused or at a cost.
    pub verdict: Verdict,
    /// `db.coll`.
    pub namespace: String,
    /// Its shard key, as shown.
    pub shard_key: String,
    /// Why, and what would make it hold (refused), or what it costs.
    pub text: String,
}

impl DeploymentReport {
    /// Whether no sequence is refused (some may hold at a cost).
    ///
    /// ```no_run
    /// # fn run(report: seqid::deployment::DeploymentReport) {
    /// std::process::exit(if report.holds() { 0 } else { 1 });
    /// # }
    /// ```
    pub fn holds(&self) -> bool {
        self.sequences
            .iter()
            .all(|sequence| sequence.verdict != Verdict::Refused)
    }
}

impl fmt::Display for DeploymentReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let topology = match self.topology {
            Topology::Standalone => "a standalone server",
            Topology::ReplicaSet => "a replica set",
            Topology::Sharded => "a sharded cluster (through mongos)",
        };
        writeln!(f, "deployment: {topology}")?;
        for collection in &self.collections {
            let sharding = match &collection.shard_key {
                None => "unsharded".to_owned(),
                Some(key) if collection.unique_shard_key => format!("sharded on {key} (unique)"),
                Some(key) => format!("sharded on {key}"),
            };
            writeln!(f, "collection {}: {sharding}", collection.namespace)?;
            for index in &collection.indexes {
                let exists = if index.exists { "present" } else { "MISSING" };
                let (name, keys, why) = (&index.name, &index.keys, index.relied_on_for);
                writeln!(f, "  index {name} {keys}: {exists} ({why})")?;
            }
        }
        for sequence in &self.sequences {
            let verdict = match sequence.verdict {
                Verdict::Holds => "holds",
                Verdict::HoldsAtACost => "holds, at a cost",
                Verdict::Refused => "REFUSED",
            };
            let (name, strategy) = (sequence.sequence, sequence.strategy);
            writeln!(f, "sequence {name} ({strategy}): {verdict}")?;
            for note in &sequence.notes {
                let (namespace, key, text) = (&note.namespace, &note.shard_key, &note.text);
                writeln!(f, "  {namespace} (sharded on {key}): {text}")?;
            }
        }
        Ok(())
    }
}

/// Checks the deployment `db` lives on for the sequences named by
/// [`of`](Check::of) and [`sequence`](Check::sequence): await the [`Check`] for a
/// [`DeploymentReport`] of what seqid finds of the deployment, of each collection the
/// sequences write (how it is sharded, the unique indexes seqid relies on there), and
/// whether each sequence's promises hold: for a deploy script, or a health endpoint.
/// Reads everything afresh (a `hello`, on a sharded cluster each collection's
/// `config.collections` entry, and each collection's indexes); inserts keep what they
/// read instead.
///
/// ```no_run
/// # use seqid::Document;
/// # #[derive(serde::Serialize, Document)]
/// # #[seq_id("user")]
/// # struct User { #[serde(rename = "_id")] id: i64 }
/// # #[derive(serde::Serialize, Document)]
/// # #[seq_id("invoice", strategy = "gapless")]
/// # struct Invoice { #[serde(rename = "_id")] id: i64 }
/// # async fn run(db: seqid::Database) -> Result<(), seqid::Error> {
/// let report = seqid::deployment::check(&db).of::<User>().of::<Invoice>().await?;
/// if !report.holds() {
///     eprintln!("{report}");
/// }
/// # Ok(()) }
/// ```
pub fn check(db: &Database) -> Check<'_> {
    Check {
        db,
        sequences: Vec::new(),
    }
}

/// A check of the deployment, from [`check`]: name what it checks by setter, and await it
/// for the [`DeploymentReport`].
#[must_use = "a check does nothing until it is awaited"]
pub struct Check<'a> {
    db: &'a Database,
    sequences: Vec<&'static Sequence>,
}

impl Check<'_> {
    /// Checks every sequence of the type `T` (its primary and any other it declares).
    ///
    /// ```no_run
    /// # use seqid::Document;
    /// # #[derive(serde::Serialize, Document)]
    /// # #[seq_id("user")]
    /// # struct User { #[serde(rename = "_id")] id: i64 }
    /// # async fn run(db: seqid::Database) -> Result<(), seqid::Error> {
    /// let report = seqid::deployment::check(&db).of::<User>().await?;
    /// # Ok(()) }
    /// ```
    pub fn of<T: Model>(mut self) -> Self {
        self.sequences.push(&T::SEQUENCE);
        self.sequences.extend(T::OTHERS);
        self
    }

    /// Checks the sequence `sequence`, e.g. one a [`SequenceOf`](crate::SequenceOf) describes.
    ///
    /// ```no_run
    /// # use seqid::Document;
    /// # #[derive(serde::Serialize, Document)]
    /// # #[seq_id("user")]
    /// # struct User { #[serde(rename = "_id")] id: i64 }
    /// # async fn run(db: seqid::Database) -> Result<(), seqid::Error> {
    /// let report = seqid::deployment::check(&db)
    ///     .sequence(User::sequence().sequence())
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub fn sequence(mut self, sequence: &'static Sequence) -> Self {
        self.sequences.push(sequence);
        self
    }
}

impl<'a> IntoFuture for Check<'a> {
    type Output = Result<DeploymentReport, Error>;
    type IntoFuture = Pin<Box<dyn Future<Output = Self::Output> + Send + 'a>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(check_deployment(self.db, self.sequences))
    }
}

/// [`Check`]'s call.
async fn check_deployment(
    db: &Database,
    sequences: Vec<&'static Sequence>,
) -> Result<DeploymentReport, Error> {
    let topology = read_topology(db, None).await?;
    // Nothing kept is used: a fresh record, dropped after the check.
    let fresh = Known::default();
    let mut report = DeploymentReport {
        topology,
        collections: Vec::new(),
        sequences: Vec::new(),
    };
    for seq in sequences {
        let (target, counters) = match topology {
            Topology::Sharded => shard_keys(&fresh, db, seq).await?,
            _ => (None, None),
        };
        collection(&mut report, db, seq, seq.collection, target.as_ref()).await?;
        if !matches!(seq.strategy, Strategy::Optimistic { .. }) {
            collection(&mut report, db, seq, seq.counters, counters.as_ref()).await?;
        }
        // The sequence's verdict, from what `assess` decides.
        let mut notes = Vec::new();
        for finding in assess(seq, target.as_ref(), counters.as_ref()) {
            let (verdict, collection, shard_key, text) = match finding {
                Finding::Refused {
                    collection,
                    shard_key,
                    why,
                } => (Verdict::Refused, collection, shard_key, why),
                Finding::Costs {
                    collection,
                    shard_key,
                    what,
                    ..
                } => (Verdict::HoldsAtACost, collection, shard_key, what),
            };
            notes.push(Note {
                verdict,
                namespace: format!("{}.{collection}", db.name()),
                shard_key,
                text,
            });
        }
        let worst = notes.iter().map(|note| note.verdict).max();
        report.sequences.push(SequenceReport {
            sequence: seq.name,
            strategy: seq.strategy_name(),
            verdict: worst.unwrap_or(Verdict::Holds),
            notes,
        });
    }
    Ok(report)
}

/// Adds `collection` (once) to the report, with the unique indexes `seq` relies on there.
async fn collection(
    report: &mut DeploymentReport,
    db: &Database,
    seq: &'static Sequence,
    collection: &str,
    shard_key: Option<&ShardKey>,
) -> Result<(), Error> {
    let namespace = format!("{}.{collection}", db.name());
    let handle = db.collection::<BsonDocument>(collection);
    let collections = &mut report.collections;
    let at = collections.iter().position(|c| c.namespace == namespace);
    let at = at.unwrap_or_else(|| {
        collections.push(CollectionReport {
            namespace,
            shard_key: shard_key.map(|key| key.key.clone()),
            unique_shard_key: shard_key.is_some_and(|key| key.unique),
            indexes: Vec::new(),
        });
        collections.len() - 1
    });
    for (name, keys, relied_on_for) in relied_on(seq, collection) {
        // `_id`'s is made with the collection, always.
        let fields: Vec<&str> = keys.keys().map(String::as_str).collect();
        let exists = name == "_id_" || has_unique(&handle, seq, &fields).await?;
        let indexes = &mut collections[at].indexes;
        if !indexes.iter().any(|known| known.name == name) {
            indexes.push(IndexReport {
                name,
                keys,
                exists,
                relied_on_for,
            });
        }
    }
    Ok(())
}

/// The unique indexes `seq` relies on in `collection` (its own, or its counters): name,
/// keys, and what for.
fn relied_on(seq: &Sequence, collection: &str) -> Vec<(String, BsonDocument, &'static str)> {
    let mut wanted = Vec::new();
    if collection == seq.collection {
        let why = match seq.strategy {
            Strategy::Optimistic { .. } => "the optimistic strategy: a number taken refused",
            _ => "a number stored twice refused (a safety net), and resume_insert",
        };
        wanted.push((identity_index(seq), identity_keys(seq), why));
    }
    if collection == seq.counters && !seq.layout.by_id() {
        let (keys, name) = counter_index(&seq.layout);
        wanted.push((name, keys, "one counter per sequence (the tool's layout)"));
    }
    wanted
}
