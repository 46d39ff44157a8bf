//! Writers: groups of tasks inserting a [`Model`]'s documents through a `Sequences`
//! handle or a bare database, one at a time or in batches. Shared by the tests and the
//! worker processes (`tests/bin/worker.rs`), which run one writer each.

use std::ops::Range;

use mongodb::options::DatabaseOptions;
use mongodb::{Client, ClientSession};
use seqid::action::Transaction;
use seqid::{AsDatabase, Document, IdField, Strategy};

use super::models::{Model, project_of};

pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// One acknowledged document: `(id, writer, n)`, `n` being its place in its writer's run
/// (which names its project for a scoped model), as the worker processes print it.
pub type Line = (i64, String, u32);

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

/// How a writer's tasks insert: one document per call, in batches, or even tasks one
/// at a time and odd tasks in batches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    One,
    Many,
    Both,
}

/// Documents per `insert_many` call of a writer.
pub const BATCH: u32 = 4;

impl Op {
    /// Documents per call of task `task`, `batch` per `insert_many`.
    pub fn batch_of(self, task: usize, batch: u32) -> u32 {
        match self {
            Op::One => 1,
            Op::Many => batch,
            Op::Both if task.is_multiple_of(2) => 1,
            Op::Both => batch,
        }
    }

    /// Documents per call of task `task` of a writer.
    pub fn batch(self, task: usize) -> u32 {
        self.batch_of(task, BATCH)
    }

    pub fn name(self) -> &'static str {
        match self {
            Op::One => "one",
            Op::Many => "many",
            Op::Both => "both",
        }
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
    /// `support::assert_dense`); a bare database keeps no count.
    pub fn retries<T: Document>(&self) -> u64 {
        match self {
            Via::Handle(db) => T::sequence().stats(db).retries,
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

    /// [`insert`](Via::insert), resuming: the documents carry their ids. With
    /// `content_is_unique`, the caller asserts that equal content is its own.
    pub async fn resume<T: Document>(
        &self,
        docs: &mut [T],
        content_is_unique: bool,
    ) -> Result<(), seqid::Error> {
        match self {
            Via::Handle(db) => resume_in(db, docs, content_is_unique).await,
            Via::Bare(db) => resume_in(db, docs, content_is_unique).await,
        }
    }
}

/// Holds the ids an insert returned to the ids its documents were given.
fn assert_returned<T: Document>(docs: &[T], returned: &[i64]) {
    let given: Vec<i64> = docs.iter().map(number_of).collect();
    assert_eq!(given, returned, "the ids returned are the documents' own");
}

fn ids<T: Document>(ids: Vec<<T::Id as seqid::IdField>::Value>) -> Vec<i64> {
    ids.into_iter()
        .map(|id| i64::try_from(id.into()).expect("ids fit i64"))
        .collect()
}

async fn insert_in<T: Document>(
    db: &impl AsDatabase,
    docs: &mut [T],
    session: Option<&mut ClientSession>,
) -> Result<(), seqid::Error> {
    let returned = match &mut *docs {
        [doc] => {
            let insert = doc.insert(db);
            let id = match session {
                Some(session) => insert.session(session).await,
                None => insert.await,
            }?;
            ids::<T>(vec![id])
        }
        docs => {
            let insert = T::insert_many(docs, db);
            ids::<T>(match session {
                Some(session) => insert.session(session).await,
                None => insert.await,
            }?)
        }
    };
    assert_returned(docs, &returned);
    Ok(())
}

async fn resume_in<T: Document>(
    db: &impl AsDatabase,
    docs: &mut [T],
    content_is_unique: bool,
) -> Result<(), seqid::Error> {
    let returned = match &mut *docs {
        [doc] => {
            let resume = doc.resume_insert(db);
            let id = match content_is_unique {
                true => resume.content_is_unique().await,
                false => resume.await,
            }?;
            ids::<T>(vec![id])
        }
        docs => {
            let resume = T::resume_insert_many(docs, db);
            ids::<T>(match content_is_unique {
                true => resume.content_is_unique().await,
                false => resume.await,
            }?)
        }
    };
    assert_returned(docs, &returned);
    Ok(())
}

/// Writer `writer`'s documents `range`, inserted with one call (in a transaction of its
/// own, run with `Transaction`, for the gapless strategy); returns them with their ids.
pub async fn insert_range<T: Model>(
    via: &Via,
    writer: &str,
    range: Range<u32>,
) -> Result<Vec<T>, BoxError> {
    if T::SEQUENCE.strategy != Strategy::Gapless {
        let mut docs: Vec<T> = range.map(|n| T::make(writer, n)).collect();
        via.insert(&mut docs, None).await?;
        return Ok(docs);
    }
    let mut session = via.db().client().start_session().await?;
    let context = (via.clone(), writer.to_owned(), range);
    let docs = Transaction::new(&mut session)
        .run(context, |session, (via, writer, range)| {
            Box::pin(async move {
                // Made inside the body, so that a run again starts from unset ids.
                let mut docs: Vec<T> = range.clone().map(|n| T::make(writer, n)).collect();
                via.insert(&mut docs, Some(session)).await?;
                Ok::<_, seqid::Error>(docs)
            })
        })
        .await?;
    Ok(docs)
}

/// The writer of task `task` of writer `by`: `by` itself for equal documents (every task
/// writes the same), `by-task` for unique ones (each task's documents its own).
pub fn task_writer<T: Model>(by: &str, task: usize) -> String {
    match T::UNIQUE {
        true => format!("{by}-{task}"),
        false => by.to_owned(),
    }
}

/// `tasks` tasks of writer `by` insert `per_task` documents each, as `op` says; returns
/// what each call was told.
pub async fn write<T: Model>(
    via: &Via,
    by: &str,
    tasks: usize,
    per_task: u32,
    op: Op,
) -> Result<Vec<Line>, BoxError> {
    let handles: Vec<_> = (0..tasks)
        .map(|task| {
            let (via, writer) = (via.clone(), task_writer::<T>(by, task));
            tokio::spawn(async move {
                let mut lines = Vec::new();
                let mut n = 0;
                while n < per_task {
                    let end = per_task.min(n + op.batch(task));
                    let docs = insert_range::<T>(&via, &writer, n..end)
                        .await
                        .map_err(|e| format!("{writer} #{n}: {e}"))?;
                    lines.extend(
                        (n..end)
                            .zip(&docs)
                            .map(|(n, doc)| (number_of(doc), writer.clone(), n)),
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

/// The worker's argument for a writer: `<model>/<via>/<op>/<by>` (parsed by
/// `tests/bin/worker.rs`).
pub fn worker_mode(model: &str, via: &str, op: Op, by: &str) -> String {
    format!("{model}/{via}/{}/{by}", op.name())
}

/// `bytes` as lowercase hex: how a worker prints a document (its BSON), so that the parent
/// compares the very values the worker held.
pub fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// [`to_hex`]'s text read back.
pub fn from_hex(hex: &str) -> Option<Vec<u8>> {
    (0..hex.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(hex.get(at..at + 2)?, 16).ok())
        .collect()
}

/// What `handles` returned, in order; panics as soon as any of them panicked, not when its
/// turn comes: tasks that meet at a barrier wait forever for one that panicked, and the
/// test would hang instead of failing with its message.
pub async fn joined<T: Send + 'static>(
    handles: Vec<tokio::task::JoinHandle<T>>,
    tasks: &str,
) -> Vec<T> {
    let mut ended = tokio::task::JoinSet::new();
    let count = handles.len();
    for (at, handle) in handles.into_iter().enumerate() {
        ended.spawn(async move { (at, handle.await) });
    }
    let mut all: Vec<Option<T>> = (0..count).map(|_| None).collect();
    while let Some(next) = ended.join_next().await {
        let (at, result) = next.expect("a join task never panics");
        match result {
            Ok(value) => all[at] = Some(value),
            Err(error) => match error.try_into_panic() {
                Ok(panic) => std::panic::resume_unwind(panic),
                Err(error) => panic!("{tasks}: {error}"),
            },
        }
    }
    all.into_iter()
        .map(|value| value.expect("joined"))
        .collect()
}

/// `tasks` tasks of writer `by` store `per_task` documents of `T` each, one per call:
/// even calls under an id reserved before the document is built (`T::reserve_id`, then
/// `insert(..).reserved(token)`; gapless: both in one transaction of the call's own, run
/// with `Transaction`), odd calls by a plain insert; returns what each call was told.
pub async fn write_reserved<T: Model<Kind: seqid::kind::WithCounter>>(
    via: &Via,
    by: &str,
    tasks: usize,
    per_task: u32,
) -> Result<Vec<Line>, BoxError> {
    let handles: Vec<_> = (0..tasks)
        .map(|task| {
            let (via, writer) = (via.clone(), task_writer::<T>(by, task));
            tokio::spawn(async move {
                let mut lines = Vec::new();
                for n in 0..per_task {
                    let id = match n % 2 {
                        0 => reserved_one::<T>(&via, &writer, n).await,
                        _ => insert_range::<T>(&via, &writer, n..n + 1)
                            .await
                            .map(|docs| number_of(&docs[0])),
                    };
                    let id = id.map_err(|e| format!("{writer} #{n}: {e}"))?;
                    lines.push((id, writer.clone(), n));
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

/// Writer `writer`'s document `n`, stored under an id reserved before it was built (see
/// [`write_reserved`]); its id.
async fn reserved_one<T: Model<Kind: seqid::kind::WithCounter>>(
    via: &Via,
    writer: &str,
    n: u32,
) -> Result<i64, BoxError> {
    if T::SEQUENCE.strategy != Strategy::Gapless {
        let mut doc = match via {
            Via::Handle(db) => reserved_in::<T>(db, writer, n, None).await?,
            Via::Bare(db) => reserved_in::<T>(db, writer, n, None).await?,
        };
        return Ok(number_of(&doc.remove(0)));
    }
    let mut session = via.db().client().start_session().await?;
    let context = (via.clone(), writer.to_owned(), n);
    let id = Transaction::new(&mut session)
        .run(context, |session, (via, writer, n)| {
            Box::pin(async move {
                // Reserved inside the body: a run again reserves again, in its own
                // transaction (the aborted one's token is void).
                let doc = match via {
                    Via::Handle(db) => reserved_in::<T>(db, writer, *n, Some(session)).await?,
                    Via::Bare(db) => reserved_in::<T>(db, writer, *n, Some(session)).await?,
                };
                Ok::<_, seqid::Error>(number_of(&doc[0]))
            })
        })
        .await?;
    Ok(id)
}

/// One token of `T` reserved in `db` (in `session`'s transaction, if given), and writer
/// `writer`'s document `n` stored under it.
async fn reserved_in<T: Model<Kind: seqid::kind::WithCounter>>(
    db: &impl AsDatabase,
    writer: &str,
    n: u32,
    mut session: Option<&mut ClientSession>,
) -> Result<Vec<T>, seqid::Error> {
    let reserve = T::reserve_id(db);
    let token = match session.as_deref_mut() {
        Some(session) => reserve.session(session).await,
        None => reserve.await,
    }?;
    let id = token.id();
    let mut doc = T::make(writer, n);
    let insert = doc.insert(db).reserved(token);
    let stored = match session {
        Some(session) => insert.session(session).await,
        None => insert.await,
    }?;
    assert_eq!(ids::<T>(vec![stored]), [id], "stored under the token's id");
    Ok(vec![doc])
}
