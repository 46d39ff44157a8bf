//! Model types shared by the tests and the worker processes they start.

use mongodb::bson::oid::ObjectId;
use serde::{Deserialize, Serialize};

/// Written by several processes at once with the counters strategy.
#[derive(Debug, Clone, Serialize, Deserialize, seqid::Document)]
#[seq_id("multi_counters", collection = "multi_counters")]
pub struct CountedDoc {
    #[serde(rename = "_id")]
    pub id: i64,
    pub writer: String,
    pub n: u32,
}

/// Written by several processes at once with the optimistic loop.
#[derive(Debug, Clone, Serialize, Deserialize, seqid::Document)]
#[seq_id(
    "multi_optimistic",
    collection = "multi_optimistic",
    strategy = "optimistic",
    max_attempts = 64
)]
pub struct OptimisticDoc {
    #[serde(rename = "_id")]
    pub id: i64,
    pub writer: String,
    pub n: u32,
}

/// Written by several processes at once with blocks of 10 ids.
#[derive(Debug, Clone, Serialize, Deserialize, seqid::Document)]
#[seq_id(
    "multi_block",
    collection = "multi_block",
    strategy = "block",
    block_size = 10
)]
pub struct BlockDoc {
    #[serde(rename = "_id")]
    pub id: i64,
    pub writer: String,
    pub n: u32,
}

/// Written by several processes at once, each insert in its own transaction.
#[derive(Debug, Clone, Serialize, Deserialize, seqid::Document)]
#[seq_id("multi_gapless", collection = "multi_gapless", strategy = "gapless")]
pub struct GaplessDoc {
    #[serde(rename = "_id")]
    pub id: i64,
    pub writer: String,
    pub n: u32,
}

/// How many projects the scoped models spread their documents over: the `n`-th document
/// of a writer goes to project `p{n % PROJECTS}`.
pub const PROJECTS: u32 = 4;

/// The project of a writer's `n`-th scoped document.
pub fn project_of(n: u32) -> String {
    format!("p{}", n % PROJECTS)
}

/// Numbered per project by several processes at once, with the counters strategy.
#[derive(Debug, Clone, Serialize, Deserialize, seqid::Document)]
#[seq_id(collection = "scoped_counters")]
pub struct ScopedCounted {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    pub id: Option<ObjectId>,
    pub project: String,
    #[seq_id("scoped_counters", scope = "project")]
    pub number: i64,
    pub writer: String,
    pub n: u32,
}

/// Numbered per project by several processes at once, with blocks of 10.
#[derive(Debug, Clone, Serialize, Deserialize, seqid::Document)]
#[seq_id(collection = "scoped_block")]
pub struct ScopedBlock {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    pub id: Option<ObjectId>,
    pub project: String,
    #[seq_id("scoped_block", scope = "project", strategy = "block", block_size = 10)]
    pub number: i64,
    pub writer: String,
    pub n: u32,
}

/// Numbered per project by several processes at once, with the optimistic loop (on the
/// unique index `create_indexes` makes).
#[derive(Debug, Clone, Serialize, Deserialize, seqid::Document)]
#[seq_id(collection = "scoped_optimistic")]
pub struct ScopedOptimistic {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    pub id: Option<ObjectId>,
    pub project: String,
    #[seq_id(
        "scoped_optimistic",
        scope = "project",
        strategy = "optimistic",
        max_attempts = 64
    )]
    pub number: i64,
    pub writer: String,
    pub n: u32,
}

/// A document made by writer `writer` as its `n`-th.
pub trait Written: seqid::Document + Send + 'static {
    fn written(writer: &str, n: u32) -> Self;

    /// Whether each insert runs in a transaction of its own (the gapless strategy).
    const IN_TRANSACTION: bool = false;
}

macro_rules! written {
    ($($t:ty),*) => {$(
        impl Written for $t {
            fn written(writer: &str, n: u32) -> Self {
                Self { id: 0, writer: writer.to_owned(), n }
            }
        }
    )*};
}

written!(CountedDoc, OptimisticDoc, BlockDoc);

macro_rules! scoped_written {
    ($($t:ty),*) => {$(
        impl Written for $t {
            fn written(writer: &str, n: u32) -> Self {
                Self {
                    id: None,
                    project: project_of(n),
                    number: 0,
                    writer: writer.to_owned(),
                    n,
                }
            }
        }
    )*};
}

scoped_written!(ScopedCounted, ScopedBlock, ScopedOptimistic);

impl Written for GaplessDoc {
    fn written(writer: &str, n: u32) -> Self {
        Self {
            id: 0,
            writer: writer.to_owned(),
            n,
        }
    }

    const IN_TRANSACTION: bool = true;
}

/// Inserts `T::written(writer, n)`, in a transaction of its own run with the driver's
/// `and_run` (which retries it after a write conflict) when `T::IN_TRANSACTION`.
pub async fn insert_written<T: Written>(
    db: &seqid::Database,
    writer: &str,
    n: u32,
) -> Result<seqid::IdValue<T>, Box<dyn std::error::Error + Send + Sync>> {
    if !T::IN_TRANSACTION {
        return Ok(T::written(writer, n).insert(db).await?);
    }
    let mut session = db.client().start_session().await?;
    let id = session
        .start_transaction()
        .and_run((db.clone(), writer.to_owned()), |session, (db, writer)| {
            Box::pin(async move {
                let mut doc = T::written(writer, n);
                Ok(doc.insert(db).session(&mut *session).await?)
            })
        })
        .await?;
    Ok(id)
}
