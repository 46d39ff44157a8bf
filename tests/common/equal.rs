//! Documents all equal but for their id (issue 17), and the writers that insert them:
//! shared by `tests/equal.rs` and the worker processes (`tests/bin/worker.rs`).
//!
//! A *writer* is a group of callers whose documents are identical: `{ _id, by }` with
//! the writer's name in `by`, or for a scoped model `{ project, number, by }`, equal
//! within each of a few projects. The callers may be the tasks of one process, of several
//! processes, or the MongoDB tutorial's loop written by hand. Nothing in a document tells
//! one caller's from another's, so a caller may only be told "stored under id N" when
//! the server acknowledged its own write.
#![allow(dead_code)] // the worker and the tests each use their own subset

use std::ops::Range;

use mongodb::bson::oid::ObjectId;
use mongodb::options::DatabaseOptions;
use mongodb::{Client, ClientSession};
use seqid::{AsDatabase, Document, IdField, Model, Strategy};
use serde::{Deserialize, Serialize};

use super::models::project_of;
use super::tutorial::{counter_loop, optimistic_loop};

pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// One acknowledged document: `(id, writer, n)`, `n` being its place in its task's run
/// (which names its project for a scoped model), as the worker processes print it.
pub type Line = (i64, String, u32);

/// A model whose documents are equal but for the id, within a scope.
pub trait Equal: Document + Send + Sync + 'static {
    /// The `n`-th document of writer `by`: for a scoped model in project
    /// [`project_of(n)`](project_of), equal to every other document of `by` there.
    fn equal(by: &str, n: u32) -> Self;
}

/// The scope of the `n`-th document of a writer of `T`: its project, or `""`.
pub fn scope_of<T: Document>(n: u32) -> String {
    match T::SEQUENCE.scope.is_empty() {
        true => String::new(),
        false => project_of(n),
    }
}

/// The id (the number, for a field sequence) a document was given, or 0.
pub fn number_of<T: Document>(doc: &T) -> i64 {
    doc.sequence_id()
        .get()
        .map_or(0, |id| i64::try_from(id.into()).expect("ids fit i64"))
}

macro_rules! equal_model {
    ($(#[$doc:meta])* $name:ident, $($attr:tt)*) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, seqid::Document)]
        #[seq_id($($attr)*)]
        pub struct $name {
            #[serde(rename = "_id")]
            pub id: i64,
            pub by: String,
        }

        impl Equal for $name {
            fn equal(by: &str, _: u32) -> Self {
                $name { id: 0, by: by.to_owned() }
            }
        }
    };
}

equal_model!(
    EqualCounted,
    "equal_counters",
    collection = "equal_counters"
);
equal_model!(
    EqualBlock,
    "equal_block",
    collection = "equal_block",
    strategy = "block",
    block_size = 10
);
equal_model!(
    /// The model, `Ticket { id: 0, by: "seqid" }`. Tasks inserting through a bare
    /// database share nothing and race each other (and every other process) for each
    /// id: many attempts.
    Ticket,
    "ticket",
    collection = "tickets",
    strategy = "optimistic",
    max_attempts = 1000
);
equal_model!(
    EqualGapless,
    "equal_gapless",
    collection = "equal_gapless",
    strategy = "gapless"
);

macro_rules! scoped_equal_model {
    ($name:ident, $($attr:tt)*) => {
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, seqid::Document)]
        #[seq_id(collection = "scoped_equal")]
        pub struct $name {
            #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
            pub id: Option<ObjectId>,
            pub project: String,
            #[seq_id($($attr)*)]
            pub number: i64,
            pub by: String,
        }

        impl Equal for $name {
            fn equal(by: &str, n: u32) -> Self {
                $name { id: None, project: project_of(n), number: 0, by: by.to_owned() }
            }
        }
    };
}

scoped_equal_model!(
    ScopedEqualCounted,
    "scoped_equal_counters",
    scope = "project"
);
scoped_equal_model!(
    ScopedEqualBlock,
    "scoped_equal_block",
    scope = "project",
    strategy = "block",
    block_size = 10
);
scoped_equal_model!(
    ScopedEqualOptimistic,
    "scoped_equal_optimistic",
    scope = "project",
    strategy = "optimistic",
    max_attempts = 1000
);

/// How a writer's tasks insert: one document per call, in batches, or even tasks one
/// at a time and odd tasks in batches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    One,
    Many,
    Both,
}

/// Documents per `insert_many` call.
pub const BATCH: u32 = 4;

impl Op {
    /// Documents per call of task `task`.
    pub fn batch(self, task: usize) -> u32 {
        match self {
            Op::One => 1,
            Op::Many => BATCH,
            Op::Both if task.is_multiple_of(2) => 1,
            Op::Both => BATCH,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Op::One => "one",
            Op::Many => "many",
            Op::Both => "both",
        }
    }

    pub fn parse(name: &str) -> Option<Op> {
        [Op::One, Op::Many, Op::Both]
            .into_iter()
            .find(|op| op.name() == name)
    }
}

/// Where a writer inserts: through a `Sequences` handle's database (its tasks share
/// state), or a bare `mongodb::Database` (each call alone).
#[derive(Clone)]
pub enum Via {
    Handle(seqid::Database),
    Bare(mongodb::Database),
}

impl Via {
    /// `name` (`handle` or `bare`) on `client`'s database `db`.
    pub fn on(name: &str, client: &Client, db: &str) -> Option<Via> {
        Via::on_with(name, client, db, DatabaseOptions::default())
    }

    /// [`on`](Via::on), with the database's `options`.
    pub fn on_with(name: &str, client: &Client, db: &str, options: DatabaseOptions) -> Option<Via> {
        match name {
            "handle" => Some(Via::Handle(
                seqid::Sequences::new(client).database_with_options(db, options),
            )),
            "bare" => Some(Via::Bare(client.database_with_options(db, options))),
            _ => None,
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Via::Handle(_) => "handle",
            Via::Bare(_) => "bare",
        }
    }

    /// The database, for the driver's own operations.
    pub fn db(&self) -> &mongodb::Database {
        match self {
            Via::Handle(db) => db,
            Via::Bare(db) => db,
        }
    }

    /// Counter upserts the handle retried (each may leave a gap on SecantusDB, see
    /// `common::assert_dense`); a bare database keeps no count.
    pub fn retries<T: Document>(&self) -> u64 {
        match self {
            Via::Handle(db) => T::stats(db).retries,
            Via::Bare(_) => 0,
        }
    }

    /// Inserts `docs`: one `insert` for a single document, else one `insert_many`.
    pub async fn insert<T: Document>(
        &self,
        docs: &mut [T],
        session: Option<&mut ClientSession>,
    ) -> Result<(), seqid::Error> {
        match self {
            Via::Handle(db) => insert_in(db, docs, session).await,
            Via::Bare(db) => insert_in(db, docs, session).await,
        }
    }

    /// [`insert`](Via::insert), resuming: the documents carry their ids.
    pub async fn resume<T: Document>(&self, docs: &mut [T]) -> Result<(), seqid::Error> {
        match self {
            Via::Handle(db) => resume_in(db, docs).await,
            Via::Bare(db) => resume_in(db, docs).await,
        }
    }
}

async fn insert_in<T: Document>(
    db: &impl AsDatabase,
    docs: &mut [T],
    session: Option<&mut ClientSession>,
) -> Result<(), seqid::Error> {
    match docs {
        [doc] => {
            let insert = doc.insert(db);
            match session {
                Some(session) => insert.session(session).await,
                None => insert.await,
            }
            .map(drop)
        }
        docs => {
            let insert = T::insert_many(docs, db);
            match session {
                Some(session) => insert.session(session).await,
                None => insert.await,
            }
            .map(drop)
        }
    }
}

async fn resume_in<T: Document>(db: &impl AsDatabase, docs: &mut [T]) -> Result<(), seqid::Error> {
    match docs {
        [doc] => doc.resume_insert(db).await.map(drop),
        docs => T::resume_insert_many(docs, db).await.map(drop),
    }
}

/// Writer `by`'s documents `range`, inserted with one call (in a transaction of its
/// own, run with the driver's `and_run`, for the gapless strategy); returns them with
/// their ids.
pub async fn insert_range<T: Equal>(
    via: &Via,
    by: &str,
    range: Range<u32>,
) -> Result<Vec<T>, BoxError> {
    if T::SEQUENCE.strategy != Strategy::Gapless {
        let mut docs: Vec<T> = range.map(|n| T::equal(by, n)).collect();
        via.insert(&mut docs, None).await?;
        return Ok(docs);
    }
    let mut session = via.db().client().start_session().await?;
    let context = (via.clone(), by.to_owned(), range);
    let docs = session
        .start_transaction()
        .and_run(context, |session, (via, by, range)| {
            Box::pin(async move {
                // Made inside the callback, so that a retry starts from unset ids.
                let mut docs: Vec<T> = range.clone().map(|n| T::equal(by, n)).collect();
                via.insert(&mut docs, Some(session)).await?;
                Ok(docs)
            })
        })
        .await?;
    Ok(docs)
}

/// `tasks` tasks of writer `by` insert `per_task` documents each, as `op` says; returns
/// what each call was told.
pub async fn write<T: Equal>(
    via: &Via,
    by: &str,
    tasks: usize,
    per_task: u32,
    op: Op,
) -> Result<Vec<Line>, BoxError> {
    let handles: Vec<_> = (0..tasks)
        .map(|task| {
            let (via, by) = (via.clone(), by.to_owned());
            tokio::spawn(async move {
                let mut lines = Vec::new();
                let mut n = 0;
                while n < per_task {
                    let end = per_task.min(n + op.batch(task));
                    let docs = insert_range::<T>(&via, &by, n..end).await?;
                    lines.extend(
                        (n..end)
                            .zip(&docs)
                            .map(|(n, doc)| (number_of(doc), by.clone(), n)),
                    );
                    n = end;
                }
                Ok::<_, BoxError>(lines)
            })
        })
        .collect();
    let mut lines = Vec::new();
    for handle in handles {
        lines.extend(handle.await??);
    }
    Ok(lines)
}

/// Runs writer `by` of the model named `model` (`counters`, `block`, `optimistic`,
/// `gapless`, `scoped-` and one of the first three; or by hand, without seqid:
/// `tutorial`, the tutorial's optimistic loop on the optimistic model's collection, and
/// `tutorial-counters` and `tutorial-block`, its getNextSequence on the counter and
/// collection of those models), as the worker processes do; returns what the calls were
/// told and the handle's counter retries.
pub async fn write_model(
    model: &str,
    via: &Via,
    by: &str,
    tasks: usize,
    per_task: u32,
    op: Op,
) -> Result<(Vec<Line>, u64), BoxError> {
    macro_rules! run {
        ($model:ty) => {
            (
                write::<$model>(via, by, tasks, per_task, op).await?,
                via.retries::<$model>(),
            )
        };
    }
    let (lines, retries) = match model {
        "counters" => run!(EqualCounted),
        "block" => run!(EqualBlock),
        "optimistic" => run!(Ticket),
        "gapless" => run!(EqualGapless),
        "scoped-counters" => run!(ScopedEqualCounted),
        "scoped-block" => run!(ScopedEqualBlock),
        "scoped-optimistic" => run!(ScopedEqualOptimistic),
        tutorial => {
            let (db, count) = (via.db(), tasks as u32 * per_task);
            let ids = match tutorial {
                "tutorial" => optimistic_loop(db, Ticket::SEQUENCE.collection, by, count).await?,
                "tutorial-counters" | "tutorial-block" => {
                    let seq = match tutorial {
                        "tutorial-counters" => EqualCounted::SEQUENCE,
                        _ => EqualBlock::SEQUENCE,
                    };
                    counter_loop(db, seq.name, seq.collection, by, count).await?
                }
                other => return Err(format!("unknown model {other}").into()),
            };
            let lines = ids
                .into_iter()
                .zip(0..)
                .map(|(id, n)| (id, by.to_owned(), n));
            (lines.collect(), 0)
        }
    };
    Ok((lines, retries))
}

/// The worker's argument for an equal-document writer: `equal/<model>/<via>/<op>/<by>`.
pub fn worker_mode(model: &str, via: &str, op: Op, by: &str) -> String {
    format!("equal/{model}/{via}/{}/{by}", op.name())
}

/// Parses [`worker_mode`]'s `<model>/<via>/<op>/<by>`.
pub fn parse_worker_mode(mode: &str) -> Option<(&str, &str, Op, &str)> {
    let mut parts = mode.splitn(4, '/');
    let (model, via, op, by) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    Some((model, via, Op::parse(op)?, by))
}
